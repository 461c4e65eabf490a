// CQL2 arithmetic, CASEI and ACCENTI on OGC items (issue 26): division by zero, overflow, underflow, complex powers and non-numbers give the same defined results on both engines, hostile arithmetic is a 400 in the OGC shape, never a 5xx; both engines fold every character of the fold tables alike.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';
import { ACCENT_FOLDS, CASE_FOLDS } from '../../src/core/unicode-folds-data.js';

const feature = (id: string, properties: Record<string, unknown>) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties });

/** Every mapped character, in runs short enough for a URL once percent-encoded: a feature holds a run, a filter its fold. */
const RUNS = ([['case', CASE_FOLDS], ['accent', ACCENT_FOLDS]] as const).flatMap(([fold, table]) => Array.from({ length: Math.ceil(table.length / 150) }, (_, i) => {
  const pairs = table.slice(i * 150, (i + 1) * 150);
  return { id: `${fold}-${i}`, fold, text: `x${pairs.map(([from]) => from).join('')}`, folded: `x${pairs.map(([, to]) => to).join('')}` };
}));

const FEATURES = [
  ...RUNS.map((run) => feature(run.id, { run: run.text })),
  feature('f1', { n: 10, d: 0, s: 'abc', big: 1e308, tiny: 1e-300, neg: -8 }),
  feature('f2', { n: 3, d: 2, s: '5', big: 1, tiny: 1, neg: 8 }),
  feature('f3', { n: -7, d: 2 }),
  feature('f4', {}),
  feature('f5', { n: null, d: '2' }),
];

/** Filter → the ids it selects; worked out by hand from the semantics in docs/ogc-filtering.md. */
const DEFINED: Array<[string, string]> = [
  ['n / d > 1', 'f2'],
  // Division by zero is unknown, and NOT keeps it unknown: f1 is in neither answer.
  ['NOT (n / d > 1)', 'f3'],
  ['n / (d - d) > 0 OR n / (d - d) <= 0', ''],
  // div truncates toward zero (floor would give -4), and % is n - d * (n div d).
  ['n div d = -3', 'f3'],
  ['n % d = -1', 'f3'],
  ['n % d = 1 OR n % d = 0', 'f2'],
  // Overflow is unknown; underflow is zero, as in IEEE arithmetic (PostgreSQL would raise an error for both).
  ['big * 10 > 0', 'f2'],
  ['NOT (big * 10 > 0)', ''],
  ['big + 1.7e308 > 0', 'f2'],
  ['0 - big - 1.7e308 < 0', 'f2'],
  ['tiny * tiny = 0', 'f1'],
  ['tiny / big = 0', 'f1'],
  ['tiny ^ 2 = 0', 'f1'],
  ['big ^ 2 > 0', 'f2'],
  // A negative number to a fraction is complex: unknown.
  ['neg ^ 0.5 > 0', 'f2'],
  ['neg ^ 3 = -512', 'f1'],
  ['2 ^ n > 1000', 'f1'],
  // A string or a null is no number, whatever it holds: unknown.
  ['s + 1 > 0', ''],
  ['d * 1 = 2', 'f2,f3'],
  ['-n > 0', 'f3'],
  // Two properties of different JSON types are not comparable: unknown, even under NOT.
  ['NOT (s = n)', ''],
  ['d < n', 'f1,f2'],
];

const HOSTILE: Array<[string, string]> = [
  ['n > 1 / 0', 'division by zero'],
  ['n > 5 % 0', 'division by zero'],
  ['n > 5 div (2 - 2)', 'division by zero'],
  ['n > 10 ^ 400', 'not a finite number'],
  ['n > 1e308 * 10', 'not a finite number'],
  ['n > (0 - 8) ^ 0.5', 'not a finite number'],
  ['n > 0 ^ -1', 'not a finite number'],
  ['n + 1e999 > 0', 'finite'],
  ["n + 'abc' > 1", 'arithmetic takes numbers'],
  ['n + TRUE > 1', 'arithmetic takes numbers'],
  ["n + TIMESTAMP('2020-01-01T00:00:00Z') > 1", 'arithmetic takes numbers'],
  ['n * geometry > 1', 'geometry'],
  ['n + ABS(d) > 1', 'ABS'],
  [`n > ${'(1 + '.repeat(100)}1${')'.repeat(100)}`, 'nest'],
  [`n > ${Array.from({ length: 600 }, () => '1').join(' + ')}`, 'nest'],
  [`n IN (${Array.from({ length: 1001 }, (_, i) => `${i} + 1`).join(', ')})`, '1000'],
];

const itemIds = (response: TestResponse): string => (response.body.features ?? []).map((f) => String(f.id)).sort().join(',');

function assertOgcError(response: TestResponse, code: string, part: string): void {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description']);
  assert.ok(String(response.body.description).includes(part), `${part} not in ${response.text}`);
}

for (const backend of BACKENDS) {
  describe(`CQL2 arithmetic on ${backend}`, () => {
    let hub: HubProcess;
    let space: string;
    const items = (query: Record<string, string>, token?: string) => call(hub, 'GET', `/ogc/collections/${space}/items?${new URLSearchParams({ limit: '100', ...query })}`,
      token ? { headers: { authorization: `Bearer ${token}` } } : {});

    before(async () => {
      hub = await startHub({ backend });
      space = await createSpaceWith(hub, FEATURES, { title: 'cql2 arithmetic' });
    });
    after(async () => { await hub?.stop(); });

    test('division by zero, overflow, underflow, complex powers and non-numbers give their defined results', async () => {
      for (const [filter, ids] of DEFINED) {
        const response = await items({ filter });
        assert.equal(response.status, 200, `${filter}: ${response.text}`);
        assert.equal(itemIds(response), ids, filter);
      }
    });

    test('the same in CQL2 JSON', async () => {
      const response = await items({
        filter: JSON.stringify({ op: '=', args: [{ op: 'div', args: [{ property: 'n' }, { property: 'd' }] }, -3] }), 'filter-lang': 'cql2-json',
      });
      assert.equal(itemIds(response), 'f3', response.text);
    });

    test('hostile arithmetic is a 400 naming the problem, in text and JSON', async () => {
      for (const [filter, part] of HOSTILE) assertOgcError(await items({ filter }), 'ogcInvalidFilter', part);
      assertOgcError(await items({ filter: 'n + nosuch > 1' }), 'ogcUnknownQueryable', '"nosuch"');
      const json = (tree: unknown) => items({ filter: typeof tree === 'string' ? tree : JSON.stringify(tree), 'filter-lang': 'cql2-json' });
      assertOgcError(await json({ op: '>', args: [{ property: 'n' }, { op: '+', args: [1] }] }), 'ogcInvalidFilter', '2 arguments');
      assertOgcError(await json('{"op":">","args":[{"property":"n"},{"op":"*","args":[2,1e999]}]}'), 'ogcInvalidFilter', 'finite');
      assertOgcError(await json({ op: '>', args: [{ property: 'n' }, { op: '-', args: [1, [2]] }] }), 'ogcInvalidFilter', 'arithmetic takes numbers');
      assertOgcError(await json({ op: '>', args: [{ property: 'n' }, { op: '/', args: [1, 0] }] }), 'ogcInvalidFilter', 'division by zero');
    });

    test('CASEI and ACCENTI fold each character of their tables as the hub folds literals, and are unknown on non-strings', async () => {
      for (const run of RUNS) {
        const filter = `${run.fold === 'case' ? 'CASEI' : 'ACCENTI'}(run) = '${run.folded}'`;
        assert.equal(itemIds(await items({ filter })), run.id, `${run.id}: ${filter}`);
      }
      assert.equal(itemIds(await items({ filter: "CASEI(s) = CASEI('ABC')" })), 'f1');
      assert.equal(itemIds(await items({ filter: "NOT (CASEI(n) = '10')" })), '', 'a number is no string: unknown');
      assert.equal(itemIds(await items({ filter: "ACCENTI(CASEI(s)) IN ('abc', '5')" })), 'f1,f2');
    });

    test('the arithmetic, case- and accent-insensitive classes are declared', async () => {
      const conformance = await call(hub, 'GET', '/ogc/conformance');
      for (const name of ['arithmetic', 'case-insensitive-comparison', 'accent-insensitive-comparison']) {
        assert.ok((conformance.body.conformsTo as string[]).includes(`http://www.opengis.net/spec/cql2/1.0/conf/${name}`), name);
      }
    });

    test('arithmetic reads nothing of a space the caller may not read', async () => {
      const stranger = (await issueToken(hub, { aid: `stranger-${backend}`, urm: ownerRights(`stranger-${backend}`) })).token;
      const response = await items({ filter: 'n / d > 1' }, stranger);
      assert.equal(response.status, 403, response.text);
      assert.ok(!response.text.includes('f2'));
    });
  });
}
