// Unit tests for tag normalization, tag-parameter splitting and tag-expression matching (API.md 4.3, 4.5, 5.4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  normalizeTag, normalizeTagList, splitTagParameter,
} from '../../src/hub/tags.js';

describe('normalizeTag', () => {
  it('lower-cases plain tags', () => {
    assert.equal(normalizeTag('Soccer'), 'soccer');
  });

  it('decomposes and drops non-ASCII characters', () => {
    assert.equal(normalizeTag('Café'), 'cafe');
    assert.equal(normalizeTag('Münster'), 'munster');
    assert.equal(normalizeTag('日本'), '');
  });

  it('keeps the case after ~, ref_ and sourceID_', () => {
    assert.equal(normalizeTag('~MyTag'), '~MyTag');
    assert.equal(normalizeTag('ref_ABC'), 'ref_ABC');
    assert.equal(normalizeTag('sourceID_Xy'), 'sourceID_Xy');
    assert.equal(normalizeTag('REF_ABC'), 'ref_abc');
  });

  it('still strips accents from case-keeping tags', () => {
    assert.equal(normalizeTag('~Café'), '~Cafe');
  });

  it('checks the case-keeping prefix after dropping non-ASCII characters', () => {
    assert.equal(normalizeTag('\u0301~MyTag'), '~MyTag');
  });

  it('keeps @ tags byte-for-byte', () => {
    assert.equal(normalizeTag('@Private'), '@Private');
    assert.equal(normalizeTag('@Café'), '@Café');
  });
});

describe('normalizeTagList', () => {
  it('normalizes, deduplicates by normalized form, keeps order and drops empties', () => {
    assert.deepEqual(normalizeTagList(['Stadium', 'soccer', 'STADIUM', '', 'Café', 'cafe', '日本']),
      ['stadium', 'soccer', 'cafe']);
  });
});

describe('splitTagParameter', () => {
  it('splits on commas that came from %2C, normalizes and deduplicates', () => {
    assert.deepEqual(splitTagParameter('addTags', ['Baseball,soccer', 'SOCCER', 'x']), ['baseball', 'soccer', 'x']);
  });

  it('drops empty pieces', () => {
    assert.deepEqual(splitTagParameter('addTags', ['', 'a,,b']), ['a', 'b']);
  });
});
