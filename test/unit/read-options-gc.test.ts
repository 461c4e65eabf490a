// The read options' lazy client-gone signal (clientGoneOnUse): spread copies keep it, and a read's reply dies young (docs/decisions.md, "What survives a scavenge").
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { clientGoneOnUse } from '../../src/http/reply/read-reply.js';

const READ_REPLY = new URL('../../src/http/reply/read-reply.js', import.meta.url).href;

/** What clientGone reads of a reply: its raw response's state and `close` event. */
function fakeReply(): { reply: FastifyReply; raw: EventEmitter & { destroyed: boolean; writableFinished: boolean } } {
  const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
  return { reply: { raw } as unknown as FastifyReply, raw };
}

test('the signal is made once, on first use, a spread copy carries it, and it aborts when the client goes away', () => {
  const { reply, raw } = fakeReply();
  const options = clientGoneOnUse({ transforms: [], etagKey: 'k' }, reply);
  assert.equal(raw.listenerCount('close'), 0);
  const copy = { ...options, transforms: [] };
  assert.equal(raw.listenerCount('close'), 1);
  assert.equal(copy.signal, options.signal);
  assert.equal(copy.etagKey, 'k');
  assert.equal(copy.signal.aborted, false);
  raw.emit('close');
  assert.equal(options.signal.aborted, true);
});

/**
 * Run in a child with --expose-gc: 200 replies of about 16 KiB, each given to a read's options and dropped, then two
 * scavenges. A reply nothing holds any more must die in the young generation; with a getter written in an object
 * literal each options object had a map of its own in the old generation, which kept the getter's closure and its
 * reply alive through every scavenge: the old space grew by about the replies' size.
 */
const SCRIPT = `
import v8 from 'node:v8';
import { EventEmitter } from 'node:events';
const { clientGoneOnUse } = await import(${JSON.stringify(READ_REPLY)});
const oldSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
globalThis.gc();
const before = oldSpace();
let last;
for (let i = 0; i < 200; i++) {
  const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false, payload: new Array(2000).fill(i) });
  last = clientGoneOnUse({ transforms: [], etagKey: String(i) }, { raw });
}
last = undefined;
globalThis.gc({ type: 'minor' });
globalThis.gc({ type: 'minor' });
process.stdout.write(String(oldSpace() - before));
`;

test('a read\'s reply is not kept past a scavenge by its options', () => {
  const grown = Number(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8', cwd: fileURLToPath(new URL('.', import.meta.url)) }));
  const replies = 200 * 2000 * 8;
  assert.ok(grown < replies / 8, `the old space grew by ${grown} bytes over two scavenges, for ${replies} bytes of dropped replies`);
});
