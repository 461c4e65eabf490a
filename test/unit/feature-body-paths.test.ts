// Differential tests: every body, valid or corrupted, gets the same answer from the JSON.parse path and the streamed scanner path of feature-body.ts.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { HubError } from '../../src/core/errors.js';
import { MAX_BODY_DEPTH } from '../../src/core/json-limits.js';
import { readFeatureBody } from '../../src/http/body/feature-body.js';

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; status: number };

function chunksOf(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

/** `threshold` 0 streams every body through the scanner; Infinity gives every body to JSON.parse. */
async function outcome(bytes: Buffer, threshold: number, chunkSize: number): Promise<Outcome> {
  try {
    // Only the JSON.parse path vouches for the values it read (`valuesChecked`): what later checks may skip, not the body.
    const { valuesChecked: _vouched, ...value } = await readFeatureBody(Readable.from(chunksOf(bytes, chunkSize)), threshold);
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof HubError)) throw error;
    return { ok: false, code: error.code, status: error.status };
  }
}

async function assertSameAnswer(body: string | Buffer, label: string): Promise<Outcome> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const parsed = await outcome(bytes, Infinity, bytes.length || 1);
  for (const chunkSize of [1, 5, bytes.length || 1]) {
    const streamed = await outcome(bytes, 0, chunkSize);
    assert.deepEqual(streamed, parsed, `${label} (chunks of ${chunkSize}): ${bytes.toString('utf8').slice(0, 200)}`);
  }
  return parsed;
}

const feature = (id: string, extra: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { name: `n "${id}" ],[`, features: [1, { a: [] }], ...extra } });

const valid: Record<string, string> = {
  collection: JSON.stringify({ type: 'FeatureCollection', features: [feature('a'), feature('b'), feature('ü')] }),
  spaced: JSON.stringify({ type: 'FeatureCollection', features: [feature('a'), feature('b')] }, null, 2),
  empty: '{"type":"FeatureCollection","features":[ ]}',
  featuresFirst: JSON.stringify({ features: [feature('a')], type: 'FeatureCollection', bbox: [0, 0, 1, 1] }),
  single: JSON.stringify(feature('one')),
  modifications: JSON.stringify({ type: 'FeatureModificationList', modifications: [{ featureData: { type: 'FeatureCollection', features: [feature('m')] } }] }),
};

test('valid bodies give the same value on both paths', async () => {
  for (const [name, body] of Object.entries(valid)) {
    const answer = await assertSameAnswer(body, name);
    assert.equal(answer.ok, true, name);
  }
});

test('every truncation of a valid body gets the same answer on both paths', async () => {
  const body = valid.collection;
  for (let length = 0; length < body.length; length++) {
    const answer = await assertSameAnswer(body.slice(0, length), `truncated at ${length}`);
    assert.equal(answer.ok, false, `truncated at ${length}`);
  }
});

test('a stray comma or a lost byte anywhere gets the same answer on both paths', async () => {
  const body = JSON.stringify({ type: 'FeatureCollection', features: [feature('a'), { type: 'Feature', properties: { x: [1, 2] } }] });
  let rejected = 0;
  for (let at = 0; at <= body.length; at++) {
    const comma = await assertSameAnswer(`${body.slice(0, at)},${body.slice(at)}`, `comma at ${at}`);
    const lost = await assertSameAnswer(body.slice(0, at) + body.slice(at + 1), `byte ${at} removed`);
    if (!comma.ok) rejected++;
    if (!lost.ok) rejected++;
  }
  assert.ok(rejected > body.length, 'most corruptions are rejected');
});

test('empty elements and trailing commas in the features array are rejected on both paths', async () => {
  const a = JSON.stringify(feature('a'));
  for (const list of [`[,${a}]`, `[${a},]`, `[${a},,${a}]`, '[,]', `[ ${a} , ]`, `[${a} ${a}]`]) {
    const answer = await assertSameAnswer(`{"type":"FeatureCollection","features":${list}}`, list);
    assert.deepEqual(answer, { ok: false, code: 'invalidJsonFeatures', status: 400 }, list);
  }
});

test('duplicate features members: the last one wins on both paths, whatever its value', async () => {
  const a = JSON.stringify(feature('a'));
  const b = JSON.stringify(feature('b'));
  const cases: Array<[string, 'ok' | 'rejected']> = [
    [`{"type":"FeatureCollection","features":[${a}],"features":[${b}]}`, 'ok'],
    [`{"type":"FeatureCollection","features":[${a}],"features":[]}`, 'ok'],
    [`{"type":"FeatureCollection","features":[${a}],"features":5}`, 'rejected'],
    [`{"type":"FeatureCollection","features":5,"features":[${b}]}`, 'ok'],
    [`{"type":"FeatureCollection","feat\\u0075res":[${a}],"features":[${b}]}`, 'ok'],
    [`{"type":"FeatureCollection","features":[${a}],"\\u0066\\u0065\\u0061\\u0074\\u0075\\u0072\\u0065\\u0073":[${b}]}`, 'ok'],
    [`{"type":"FeatureCollection","feat\\u0075res":[${a}]}`, 'ok'],
    [`{"type":"FeatureCollection","features":[${a}],"type":"Feature"}`, 'ok'],
  ];
  for (const [body, expected] of cases) {
    const answer = await assertSameAnswer(body, body.slice(0, 60));
    assert.equal(answer.ok, expected === 'ok', body);
    if (answer.ok && body.endsWith(`"features":[${b}]}`)) {
      assert.deepEqual((answer.value as { features: unknown[] }).features, [JSON.parse(b)]);
    }
  }
});

test('byte-order marks and garbage around the root get the same answer on both paths', async () => {
  const body = valid.collection;
  const bom = '\uFEFF';
  const cases: Array<[string, boolean]> = [
    [bom + body, true], [bom + bom + body, false], [body + bom, false], [` \n${body}\t `, true],
    [`x${body}`, false], [`${body}x`, false], [`${body}${body}`, false], [`${body},`, false], [`[${body}]`, false],
    [`${body}]`, false], [`${body}}`, false], [`{${body}`, false], ['', false], ['   ', false], ['null', false],
    [body.replace('"features":[', `"features":[${bom}`), false], [body.replace('"type"', '"type" x'), false],
    [body.replace('{"type"', '{"type"}'), false],
  ];
  for (const [text, accepted] of cases) {
    const answer = await assertSameAnswer(text, JSON.stringify(text.slice(0, 40)));
    assert.equal(answer.ok, accepted, JSON.stringify(text.slice(0, 80)));
  }
});

test('mismatched brackets inside and around features get the same answer on both paths', async () => {
  const cases = [
    '{"type":"FeatureCollection","features":[{"type":"Feature"}}',
    '{"type":"FeatureCollection","features":[1}]}',
    '{"type":"FeatureCollection","features":[{"a":[1}]}]}',
    '{"type":"FeatureCollection","features":[{"type":"Feature"}}{"x":1}]}',
    '{"type":"FeatureCollection","features":[{"type":"Feature"}]]}',
    '{"type":"FeatureCollection","features":{"a":[1]}}',
  ];
  for (const text of cases) {
    const answer = await assertSameAnswer(text, text);
    assert.equal(answer.ok, false, text);
  }
});

test('nesting past the body bound is rejected on both paths before any parser sees it, at 20,000 levels too', async () => {
  const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  for (const levels of [MAX_BODY_DEPTH, 20000]) {
    const text = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":${deep(levels)}}]}`;
    const answer = await assertSameAnswer(text, `${levels} levels`);
    assert.deepEqual(answer, { ok: false, code: 'jsonTooDeep', status: 400 });
  }
  const within = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":${deep(MAX_BODY_DEPTH - 4)}}]}`;
  assert.equal((await assertSameAnswer(within, 'within the body bound')).ok, true);
});
