// The account settings of loadConfig: session lifetime and public URL, with their defaults and refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';

test('sessions last 12 hours by default; HUB_SESSION_TTL takes hours or the usual durations, at least a minute', () => {
  assert.equal(loadConfig([], {}).sessionTtl, 12 * 3_600_000);
  assert.equal(loadConfig(['--session-ttl', '2h'], {}).sessionTtl, 2 * 3_600_000);
  assert.equal(loadConfig([], { HUB_SESSION_TTL: '30min' }).sessionTtl, 30 * 60_000);
  for (const value of ['30s', '0', 'forever', '1.5h']) {
    assert.throws(() => loadConfig(['--session-ttl', value], {}), /Invalid (session lifetime|duration)/, value);
  }
});

test('HUB_PUBLIC_URL must be an http or https URL; it has no default', () => {
  assert.equal(loadConfig([], {}).publicUrl, undefined);
  assert.equal(loadConfig([], { HUB_PUBLIC_URL: 'https://hub.example.org' }).publicUrl, 'https://hub.example.org');
  for (const value of ['hub.example.org', 'ftp://hub.example.org']) {
    assert.throws(() => loadConfig(['--public-url', value], {}), /Invalid public URL/, value);
  }
});
