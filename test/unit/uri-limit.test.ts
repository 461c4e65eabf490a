// Unit tests for telling a URI over the limit from oversized headers in the bytes Node's parser overflowed in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isUriOverflow, MAX_URI_LENGTH } from '../../src/http/uri-limit.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');
/** The read as Node reports it: the parser got through all of it. */
const whole = (text: string) => isUriOverflow(bytes(text), text.length);

describe('isUriOverflow', () => {
  test('a read holding the start of the request: the URI overflowed when its line had not ended', () => {
    assert.equal(whole(`GET /${'a'.repeat(65_000)}`), true);
    assert.equal(whole(`\r\nM-SEARCH /${'a'.repeat(20_000)}`), true, 'empty lines before the request line are skipped');
  });

  test('a read holding the whole request line: the URI overflowed when its target is longer than MAX_URI_LENGTH', () => {
    const head = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Pad: ${'y'.repeat(20_000)}`;
    assert.equal(whole(head(`/${'a'.repeat(MAX_URI_LENGTH)}`)), true);
    assert.equal(whole(head(`/${'a'.repeat(MAX_URI_LENGTH - 1)}`)), false);
    assert.equal(whole(head('/hub/spaces')), false);
  });

  test('only the bytes the parser got through count: a line end after them does not end the request line', () => {
    const text = `GET /${'a'.repeat(30_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
    assert.equal(isUriOverflow(bytes(text), 30_005), true);
    const later = `${'a'.repeat(10_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
    assert.equal(isUriOverflow(bytes(later), 10_000), true, 'the rest of a target that began in an earlier read');
  });

  test('a read from the middle of the request: a line end or a space in it means the headers overflowed', () => {
    assert.equal(whole('a'.repeat(20_000)), true, 'no line end and no space: the rest of the target');
    assert.equal(whole(`${'a'.repeat(100)} HTTP/1.1\r\nX-Pad: ${'y'.repeat(20_000)}`), false);
    assert.equal(whole(`${'y'.repeat(100)}\r\nX-Pad: ${'y'.repeat(20_000)}`), false);
    assert.equal(whole(`session=${'c'.repeat(9_000)}; theme=${'d'.repeat(9_000)}`), false, 'a cookie header: a space');
  });

  test('without the bytes nothing points to the URI', () => {
    assert.equal(isUriOverflow(undefined, undefined), false);
  });
});
