// A node:test reporter writing each test file's seconds (the sum of its top-level tests) as JSON: test/file-durations.json is refreshed from it.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface TestEvent {
  type: string;
  data: { nesting?: number; file?: string; details?: { duration_ms?: number } };
}

const TEST_DIR = fileURLToPath(new URL('..', import.meta.url));

export default async function* durations(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds = new Map<string, number>();
  for await (const { type, data } of source) {
    if ((type !== 'test:pass' && type !== 'test:fail') || data.nesting !== 0 || data.file === undefined) continue;
    const file = relative(TEST_DIR, data.file);
    seconds.set(file, (seconds.get(file) ?? 0) + (data.details?.duration_ms ?? 0) / 1000);
  }
  const slowestFirst = [...seconds].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([file, s]) => [file, Math.round(s)]);
  yield `${JSON.stringify(Object.fromEntries(slowestFirst), null, 2)}\n`;
}
