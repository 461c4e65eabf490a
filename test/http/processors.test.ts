// Black-box tests of the space processors schema-validator and rule-tagger on every kind of write (issue 15).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken } from '../helpers/tokens.js';

/** Features must have a string `name`; `area`, when given, is a number. */
const schemaOf = (draft?: string): Record<string, unknown> => ({
  ...(draft === undefined ? {} : { $schema: draft }),
  type: 'object',
  required: ['properties'],
  properties: {
    properties: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, area: { type: 'number' } } },
  },
});

const validator = (schema: unknown) => [{ id: 'schema-validator', params: { schema } }];
const tagger = (taggingRules: unknown) => [{ id: 'rule-tagger', params: { taggingRules } }];

/** Processor refusals are all 400s. */
const assertRefused = (response: TestResponse, code: string, ...parts: string[]): void => assertError(response, 400, code, ...parts);

for (const backend of BACKENDS) {
  describe(`space processors (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const features = (space: string) => `/hub/spaces/${space}/features`;
    const countOf = async (space: string): Promise<number> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };
    const tagsOf = async (space: string, id: string): Promise<string[]> => {
      const response = await call(hub, 'GET', `${features(space)}/${id}`);
      assert.equal(response.status, 200, response.text);
      return namespaceOf(response.body as unknown as FeatureJson).tags;
    };

    describe('schema-validator', () => {
      for (const draft of [undefined, 'http://json-schema.org/draft-04/schema#', 'http://json-schema.org/draft-06/schema#',
        'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema']) {
        for (const form of ['string', 'object'] as const) {
          test(`a schema of draft ${draft ?? '(none: 07)'} given as ${form} validates writes`, async () => {
            const schema = schemaOf(draft);
            const space = await createSpace(hub, { processors: validator(form === 'string' ? JSON.stringify(schema) : schema) });
            const good = await call(hub, 'PUT', features(space), { body: collection(point('a', { name: 'A' })) });
            assert.equal(good.status, 200, good.text);
            const bad = await call(hub, 'PUT', features(space), { body: collection(point('b', { name: 5 })) });
            assertRefused(bad, 'schemaValidationFailed', 'position 0', 'id b', '/properties/name');
            assert.equal(await countOf(space), 1);
          });
        }
      }

      test('one violating feature in a batch writes nothing and is named by position, id and path', async () => {
        const space = await createSpace(hub, { processors: validator(JSON.stringify(schemaOf())) });
        const body = collection(point('f0', { name: 'x' }), point('f1', { name: 'y' }), point('f2', { name: 'z', area: 'big' }), point('f3', { name: 'w' }));
        const response = await call(hub, 'PUT', features(space), { body });
        assertRefused(response, 'schemaValidationFailed', 'position 2', 'id f2', '/properties/area', 'must be number');
        assert.equal(await countOf(space), 0);
      });

      test('POST, PATCH and PUT of one feature, and modification lists, are all validated', async () => {
        const space = await createSpace(hub, { processors: validator(schemaOf()) });
        assert.equal((await call(hub, 'PUT', features(space), { body: collection(point('a', { name: 'A' })) })).status, 200);
        const bad = point('a', { name: 7 });
        assertRefused(await call(hub, 'POST', features(space), { body: collection(bad) }), 'schemaValidationFailed', 'id a', '/properties/name');
        assertRefused(await call(hub, 'PUT', `${features(space)}/a`, { body: bad }), 'schemaValidationFailed', 'id a');
        assertRefused(await call(hub, 'PATCH', `${features(space)}/a`, { body: bad }), 'schemaValidationFailed', 'id a');
        assertRefused(await call(hub, 'PUT', `${features(space)}/new`, { body: point('new', {}) }), 'schemaValidationFailed', 'id new');
        const list = { type: 'FeatureModificationList', modifications: [{ onFeatureNotExists: 'create', featureData: collection(point('m1', { name: 'M' }), bad) }] };
        assertRefused(await call(hub, 'POST', features(space), { body: list }), 'schemaValidationFailed', 'position 1', 'id a');
        assert.equal(await countOf(space), 1);
        const stored = await call(hub, 'GET', `${features(space)}/a`);
        assert.equal((stored.body.properties as Record<string, unknown>).name, 'A');
      });

      test('a patch is validated as merged into the stored feature', async () => {
        const space = await createSpace(hub, { processors: validator(schemaOf()) });
        assert.equal((await call(hub, 'PUT', features(space), { body: point('a', { name: 'A' }) })).status, 200);
        // The patch alone lacks the required name; merged into the stored feature it has one.
        const partial = await call(hub, 'PATCH', `${features(space)}/a`, { body: { type: 'Feature', properties: { area: 3 } } });
        assert.equal(partial.status, 200, partial.text);
        const viaPost = await call(hub, 'POST', features(space), { body: collection({ type: 'Feature', id: 'a', properties: { area: 4 } }) });
        assert.equal(viaPost.status, 200, viaPost.text);
        // Removing the name (null in a merge patch) leaves a feature the schema refuses.
        const removing = await call(hub, 'PATCH', `${features(space)}/a`, { body: { type: 'Feature', properties: { name: null } } });
        assertRefused(removing, 'schemaValidationFailed', 'id a', "required property 'name'");
        const stored = await call(hub, 'GET', `${features(space)}/a`);
        assert.deepEqual([(stored.body.properties as Record<string, unknown>).name, (stored.body.properties as Record<string, unknown>).area], ['A', 4]);
      });

      test('an invalid schema is refused on creation and on patch, naming the processor', async () => {
        for (const schema of ['{not json', JSON.stringify({ type: 5 }), { $ref: 'http://example.com/remote.json' }, { $schema: 'http://example.com/my-draft', type: 'object' }, 42]) {
          const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'bad schema', processors: validator(schema) } });
          assertRefused(created, 'spaceValidation', 'processors.schema-validator[0].params.schema');
        }
        const space = await createSpace(hub);
        const patched = await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { processors: validator('{"type": "objekt"}') } });
        assertRefused(patched, 'spaceValidation', 'processors.schema-validator[0].params.schema');
        const stored = await call(hub, 'GET', `/hub/spaces/${space}`);
        assert.equal(stored.body.processors, undefined);
      });

      test('a $ref inside the schema itself resolves without any network', async () => {
        const schema = { $defs: { named: { type: 'object', required: ['name'] } }, type: 'object', properties: { properties: { $ref: '#/$defs/named' } } };
        const space = await createSpace(hub, { processors: validator({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema }) });
        assertRefused(await call(hub, 'PUT', features(space), { body: point('x', {}) }), 'schemaValidationFailed', 'id x');
        assert.equal((await call(hub, 'PUT', features(space), { body: point('x', { name: 'n' }) })).status, 200);
      });

      test('hostile schemas get a 4xx, never a 5xx', async () => {
        const deep = '{"items":'.repeat(5000) + '{}' + '}'.repeat(5000);
        const huge = JSON.stringify({ type: 'object', description: 'x'.repeat(400_000) });
        const manyProperties = JSON.stringify({ type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string' }])) });
        for (const schema of [deep, huge, manyProperties, { not: { not: { not: {} } } }, { pattern: '(' }]) {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'hostile', processors: validator(schema) } });
          assert.ok(response.status < 500, `${response.status} ${response.text.slice(0, 300)}`);
        }
      });

      test('PATCH with processors [] or {} removes them: writes are no longer validated', async () => {
        for (const none of [[], {}]) {
          const space = await createSpace(hub, { processors: validator(schemaOf()) });
          assert.equal((await call(hub, 'PUT', features(space), { body: point('a', {}) })).status, 400);
          const patched = await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { processors: none } });
          assert.equal(patched.status, 200, patched.text);
          assert.equal(patched.body.processors, undefined, patched.text);
          const written = await call(hub, 'PUT', features(space), { body: point('a', {}) });
          assert.equal(written.status, 200, written.text);
        }
      });

      test('a caller who may not write gets 403, not the schema\'s verdict', async () => {
        const space = await createSpace(hub, { processors: validator(schemaOf()), shared: true });
        const reader = await issueToken(hub, { aid: `reader-${space}`, urm: { 'xyz-hub': { readFeatures: [{}] } } });
        const headers = { authorization: `Bearer ${reader.token}` };
        const refused = await call(hub, 'PUT', features(space), { body: point('a', { name: 5 }), headers });
        assert.equal(refused.status, 403, refused.text);
        assert.equal((refused.body.errorMessage ?? '').includes('name'), false, refused.text);
      });

      test('a schema replaced by PATCH applies from the next write on', async () => {
        const space = await createSpace(hub, { processors: validator(schemaOf()) });
        const strict = { ...schemaOf(), properties: { properties: { type: 'object', required: ['name', 'area'] } } };
        assert.equal((await call(hub, 'PUT', features(space), { body: point('a', { name: 'A' }) })).status, 200);
        assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { processors: validator(strict) } })).status, 200);
        assertRefused(await call(hub, 'PUT', features(space), { body: point('b', { name: 'B' }) }), 'schemaValidationFailed', 'id b');
      });
    });

    describe('rule-tagger', () => {
      const rules = { large: '$.features[?(@.properties.area>=500)]', named: '$.features[*].properties.name' };

      test('matching features get the tag, others do not', async () => {
        const space = await createSpace(hub, { processors: tagger(rules) });
        const body = collection(point('big', { area: 600 }), point('small', { area: 10, name: 'S' }), point('none', {}));
        const response = await call(hub, 'PUT', features(space), { body });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(await tagsOf(space, 'big'), ['large']);
        assert.deepEqual(await tagsOf(space, 'small'), ['named']);
        assert.deepEqual(await tagsOf(space, 'none'), []);
      });

      test('rule tags come after addTags and removeTags, and with the feature\'s own tags', async () => {
        const space = await createSpace(hub, { processors: tagger(rules) });
        const own = { ...point('a', { area: 900 }), properties: { area: 900, '@ns:com:here:xyz': { tags: ['own', 'gone'] } } };
        const response = await call(hub, 'PUT', `${features(space)}?addTags=extra&removeTags=gone,large`, { body: collection(own, point('b', {})) });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(await tagsOf(space, 'a'), ['own', 'extra', 'large']);
        assert.deepEqual(await tagsOf(space, 'b'), ['extra']);
      });

      test('single-feature writes and modification lists are tagged too', async () => {
        const space = await createSpace(hub, { processors: tagger(rules) });
        assert.equal((await call(hub, 'PUT', `${features(space)}/one`, { body: point('one', { area: 700 }) })).status, 200);
        assert.deepEqual(await tagsOf(space, 'one'), ['large']);
        const list = { type: 'FeatureModificationList', modifications: [{ onFeatureNotExists: 'create', featureData: collection(point('two', { name: 'T' })) }] };
        assert.equal((await call(hub, 'POST', features(space), { body: list })).status, 200);
        assert.deepEqual(await tagsOf(space, 'two'), ['named']);
      });

      test('a filter that fails on some features does not match them and is no server error', async () => {
        const space = await createSpace(hub, { processors: tagger({ deep: '$.features[?(@.properties.a.b>1)]' }) });
        const response = await call(hub, 'PUT', features(space), { body: collection(point('x', {}), point('y', { a: { b: 2 } })) });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(await tagsOf(space, 'x'), []);
        assert.deepEqual(await tagsOf(space, 'y'), ['deep']);
      });

      test('filters read and compare members: calls, regular expressions and filters that do not parse are refused, also where only data reaches them', async () => {
        const refused = {
          // jsonpath-plus's own evaluator ran these: a catastrophic regular expression on a 40-character name held the
          // node's event loop for hours, padStart allocated a gigabyte, and array methods changed what was about to be stored.
          match: '$.features[?(@.properties.name.match(/^(a+)+$/))]',
          test: '$.features[?(/^(a+)+$/.test(@.properties.name))]',
          pad: '$.features[?(@.properties.name.padStart(500000000))]',
          reverse: '$.features[?(@.geometry.coordinates.reverse())]',
          pop: '$.features[?(@root.features.pop())]',
          code: '$.features[?(process.exit())]',
          // Filters the probe feature does not reach: a write reaching this one answered 500.
          unreached: '$.features[*].properties.x[?(@.a ==)]',
          unreachedCall: '$.features[*].properties.x[?(@.name.match(/(a+)+$/))]',
        };
        const space = await createSpace(hub);
        for (const [tag, rule] of Object.entries(refused)) {
          const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'bad rules', processors: tagger({ [tag]: rule }) } });
          assertRefused(created, 'spaceValidation', 'processors.rule-tagger[0].params.taggingRules', `"${tag}"`, 'cannot call methods or hold regular expressions');
          assertRefused(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { processors: tagger({ [tag]: rule }) } }), 'spaceValidation', `"${tag}"`);
        }
        // What filters can do still works: members at any depth, lengths, comparisons, arithmetic, typeof, undefined.
        const kept = await createSpace(hub, { processors: tagger({
          two: '$.features[?(@.properties.list.length === 2 && @.geometry.coordinates[0] > 8)]',
          sum: '$.features[?(@.properties.list[0] + @.properties.list[1] === 7)]',
          typed: '$.features[?(typeof @.properties.name === "string" && @.properties.gone === undefined)]',
        }) });
        const response = await call(hub, 'PUT', features(kept), { body: collection(point('a', { list: [1, 2], name: 'a'.repeat(40) }), point('b', { list: [3, 4] })) });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual((await tagsOf(kept, 'a')).sort(), ['two', 'typed']);
        assert.deepEqual((await tagsOf(kept, 'b')).sort(), ['sum', 'two']);
        // A script [(…)] that fails on a feature failed the whole path in jsonpath-plus (a write answered 500).
        const script = await call(hub, 'POST', '/hub/spaces', { body: { title: 'bad rules', processors: tagger({ last: '$.features[(@.x.y)]' }) } });
        assertRefused(script, 'spaceValidation', 'processors.rule-tagger[0].params.taggingRules', 'select with a filter');
      });

      test('tagging rules run before schema validation: a schema requiring the rule tag passes', async () => {
        const requiresTag = {
          type: 'object',
          properties: { properties: { type: 'object', properties: { '@ns:com:here:xyz': { type: 'object', required: ['tags'], properties: { tags: { contains: { const: 'large' } } } } } } },
        };
        const space = await createSpace(hub, { processors: [...tagger(rules), ...validator(requiresTag)] });
        assert.equal((await call(hub, 'PUT', features(space), { body: point('big', { area: 501 }) })).status, 200);
        assertRefused(await call(hub, 'PUT', features(space), { body: point('small', { area: 5 }) }), 'schemaValidationFailed', 'id small');
        assert.equal(await countOf(space), 1);
      });

      test('invalid tagging rules are refused on creation and on patch', async () => {
        for (const taggingRules of [undefined, 'large', { large: 5 }, { large: 'features' }, { large: '$.features[?(@.properties.area>=)]' }, { large: '$.features[?(' }]) {
          const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'bad rules', processors: tagger(taggingRules) } });
          assertRefused(created, 'spaceValidation', 'processors.rule-tagger[0].params.taggingRules');
        }
        const space = await createSpace(hub);
        assertRefused(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { processors: tagger({ x: 1 }) } }), 'spaceValidation', 'rule-tagger');
      });
    });
  });
}
