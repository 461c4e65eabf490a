// Summarizes a V8 .cpuprofile (from `npm run bench -- --profile`): where the hub spent its CPU time, by function and by file.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string): string {
  const nodeModules = url.lastIndexOf('node_modules/');
  if (nodeModules >= 0) return url.slice(nodeModules + 'node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  return dist >= 0 ? url.slice(dist + '/dist/'.length) : url.replace(/^file:\/\//, '');
}

function top(totals: Map<string, number>, all: number, count: number): string {
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([name, micros]) => `${(micros / 1000).toFixed(0).padStart(7)} ms ${((100 * micros) / all).toFixed(1).padStart(5)}%  ${name}`)
    .join('\n');
}

function summarize(file: string, count: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let all = 0;
  for (const [id, micros] of selfTime) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const where = frame.url ? shortUrl(frame.url) : '(native)';
    const name = `${frame.functionName || '(anonymous)'}  ${where}${frame.url ? ':' + (frame.lineNumber + 1) : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byFile.set(where, (byFile.get(where) ?? 0) + micros);
    all += micros;
  }
  process.stdout.write(`${file}: ${(all / 1000).toFixed(0)} ms sampled\n\nSelf time by function:\n${top(byFunction, all, count)}\n\nSelf time by file:\n${top(byFile, all, count)}\n`);
}

const [file, count] = process.argv.slice(2);
if (!file) {
  process.stderr.write('Usage: node dist/bench/profile-summary.js <file.cpuprofile> [entries]\n');
  process.exit(1);
}
summarize(file, Number(count ?? 30));
