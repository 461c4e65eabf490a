// HUB_CACHE_SIZE in loadConfig: a size in bytes or with k/m/g, 0 to turn the answer cache off, a default sized for the machine; the requests the cache remembers.
import assert from 'node:assert/strict';
import { totalmem } from 'node:os';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { AnswerCache } from '../../src/hub/features/answer-cache.js';

test('the cache defaults to 1/16 of memory over the workers, at most 256 MiB a process; HUB_CACHE_SIZE sets it, 0 turns it off', () => {
  assert.equal(loadConfig(['--workers', '2'], {}).cacheSize, Math.min(256 * 1024 ** 2, Math.floor(totalmem() / 32)));
  assert.ok(loadConfig([], {}).cacheSize <= 256 * 1024 ** 2);
  assert.equal(loadConfig([], { HUB_CACHE_SIZE: '64m' }).cacheSize, 64 * 1024 ** 2);
  assert.equal(loadConfig(['--cache-size', '0'], {}).cacheSize, 0);
  for (const value of ['-1', 'lots', '1.5g']) assert.throws(() => loadConfig(['--cache-size', value], {}), /Invalid size/, value);
  const off = new AnswerCache(0);
  off.set('k', { body: Buffer.from('x'), etag: '"e"' }, 'request');
  assert.equal(off.get('k'), undefined);
  assert.equal(off.answeredLately('request'), false);
  assert.deepEqual(off.figures(), { maxSize: 0, size: 0, entries: 0, hits: 0, misses: 0, hitRate: 0 });
});

test('the cache remembers which requests it kept answers of lately, at any version, as a hint for their next read', () => {
  const cache = new AnswerCache(1024 ** 2);
  assert.equal(cache.answeredLately('geojson\n/tile/1'), false);
  cache.set('geojson\nspace\n7\n/tile/1', { body: Buffer.from('{}'), etag: '"a"' }, 'geojson\n/tile/1');
  assert.equal(cache.answeredLately('geojson\n/tile/1'), true);
  assert.equal(cache.answeredLately('mvt\n/tile/1'), false);
  assert.equal(cache.answeredLately('geojson\n/tile/2'), false);
});
