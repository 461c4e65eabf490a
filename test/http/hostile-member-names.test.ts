// Black-box tests of names a client chooses that are also members of every JavaScript object (`__proto__`, `constructor`, `toString`): kept as sent, refused or ignored like any other name, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EventStream, type ReceivedEvent } from '../helpers/event-streams.js';
import { assertRefused } from '../helpers/hostile.js';
import { assertError, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken } from '../helpers/tokens.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
/** As keys of the maps of a space definition (connector ids, property paths, tags), `prototype` too. */
const KEYS = [...NAMES, 'prototype'];

const JSON_TYPE = { 'content-type': 'application/json' };

/** A member of an answer as JSON text: JSON.parse keeps `__proto__` as an own member, so this is what the hub sent. */
const memberText = (response: TestResponse, name: string): string | undefined => {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  return Object.hasOwn(body, name) ? JSON.stringify(body[name]) : undefined;
};

/** A FeatureCollection as text, each feature a point with its properties given as JSON text (a key `__proto__` stays a key). */
const collectionText = (...features: Array<[id: string, properties: string]>): string =>
  `{"type":"FeatureCollection","features":[${features.map(([id, properties]) =>
    `{"type":"Feature","id":${JSON.stringify(id)},"geometry":{"type":"Point","coordinates":[1,1]},"properties":${properties}}`).join(',')}]}`;

const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id).sort();

for (const backend of BACKENDS) {
  describe(`names of Object.prototype's members in requests (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
        body: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'f1', geometry: { type: 'Point', coordinates: [1, 1] }, properties: { a: 1 } }] },
      });
    });
    after(async () => { await hub.stop(); });

    test('a space definition holding such a member: created or changed without it, like any unknown member', async () => {
      for (const name of NAMES) {
        const created = await call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","${name}":{"a":1}}`, headers: { 'content-type': 'application/json' } });
        assert.equal(created.status, 200, `POST ${name}: ${created.text.slice(0, 300)}`);
        assert.ok(!Object.hasOwn(created.body, name), `POST ${name} keeps no such member`);
        const patched = await call(hub, 'PATCH', `/hub/spaces/${space}`, { rawBody: `{"${name}":"x","title":"renamed ${name}"}`, headers: { 'content-type': 'application/json' } });
        assert.equal(patched.status, 200, `PATCH ${name}: ${patched.text.slice(0, 300)}`);
        assert.equal(patched.body.title, `renamed ${name}`);
        assert.ok(!Object.hasOwn(patched.body, name), `PATCH ${name} keeps no such member`);
      }
    });

    test('such a name as a key of listeners, processors, searchableProperties, sortableProperties or client is kept as sent', async () => {
      for (const key of KEYS) {
        const k = JSON.stringify(key);
        const members: Record<string, string> = {
          listeners: `{${k}:[{"params":{${k}:1}}]}`,
          processors: `{${k}:[{"params":{"a":1}},{"params":{"b":2}}]}`,
          searchableProperties: `{${k}:true,${JSON.stringify(`${key}.a::string`)}:false}`,
          sortableProperties: `[[${k}]]`,
          client: `{${k}:{${k}:"x"}}`,
        };
        const created = await call(hub, 'POST', '/hub/spaces', {
          rawBody: `{"title":"maps",${Object.entries(members).map(([name, text]) => `"${name}":${text}`).join(',')}}`, headers: JSON_TYPE,
        });
        assert.equal(created.status, 200, `POST ${key}: ${created.text.slice(0, 300)}`);
        const id = created.body.id as string;
        const read = await call(hub, 'GET', `/hub/spaces/${id}`);
        for (const [name, text] of Object.entries(members)) {
          assert.equal(memberText(created, name), text, `POST ${key}: ${name} as sent`);
          assert.equal(memberText(read, name), text, `GET ${key}: ${name} as sent`);
        }
        // The list form of connectors (the Python client's) comes back as the map, configurations of one id together.
        const listed = await call(hub, 'POST', '/hub/spaces', {
          rawBody: `{"title":"list","processors":[{"id":${k},"params":{"a":1}},{"id":${k},"params":{"b":2}}],"listeners":[{"id":${k}}]}`, headers: JSON_TYPE,
        });
        assert.equal(listed.status, 200, `POST ${key} in the list form: ${listed.text.slice(0, 300)}`);
        assert.equal(memberText(listed, 'processors'), members.processors, `POST ${key}: processors as the map`);
        assert.equal(memberText(listed, 'listeners'), `{${k}:[{}]}`, `POST ${key}: listeners as the map`);
        const replaced = await call(hub, 'PATCH', `/hub/spaces/${id}`, { rawBody: `{"processors":[{"id":${k},"params":{"c":3}}]}`, headers: JSON_TYPE });
        assert.equal(replaced.status, 200, `PATCH ${key} in the list form: ${replaced.text.slice(0, 300)}`);
        assert.equal(memberText(replaced, 'processors'), `{${k}:[{"params":{"c":3}}]}`, `PATCH ${key}: the list replaces the map`);
        const merged = await call(hub, 'PATCH', `/hub/spaces/${id}`, {
          rawBody: `{"listeners":{${k}:null,"other":[{}]},"searchableProperties":{${k}:false},"client":{${k}:{"y":1}}}`, headers: JSON_TYPE,
        });
        assert.equal(merged.status, 200, `PATCH ${key}: ${merged.text.slice(0, 300)}`);
        assert.equal(memberText(merged, 'listeners'), '{"other":[{}]}', `PATCH ${key}: null removes the connector`);
        assert.equal(memberText(merged, 'searchableProperties'), `{${k}:false,${JSON.stringify(`${key}.a::string`)}:false}`, `PATCH ${key}: searchableProperties merged`);
        assert.equal(memberText(merged, 'client'), `{${k}:{${k}:"x","y":1}}`, `PATCH ${key}: client merged`);
      }
    });

    test('a connector id of such a name needs accessConnectors for that id, like any other', async () => {
      const aid = 'connector-user';
      const { token } = await issueToken(hub, { aid, urm: { 'xyz-hub': { manageSpaces: [{ owner: aid }], accessConnectors: [{ id: 'constructor' }] } } });
      const { token: noConnectors } = await issueToken(hub, { aid, urm: { 'xyz-hub': { manageSpaces: [{ owner: aid }] } } });
      const headers = { ...JSON_TYPE, authorization: `Bearer ${token}` };
      const create = (connectors: string) => call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","processors":${connectors}}`, headers });
      const granted = await create('[{"id":"constructor","params":{"a":1}}]');
      assert.equal(granted.status, 200, granted.text.slice(0, 300));
      for (const connectors of ['[{"id":"toString"}]', '[{"id":"__proto__"}]', '{"__proto__":[{}]}', '{"prototype":[{}]}']) {
        assertError(await create(connectors), 403, 'insufficientRights');
      }
      const path = `/hub/spaces/${granted.body.id as string}`;
      const unchanged = await call(hub, 'PATCH', path, { rawBody: '{"title":"renamed","processors":{"constructor":[{"params":{"a":1}}]}}', headers });
      assert.equal(unchanged.status, 200, unchanged.text.slice(0, 300));
      assertError(await call(hub, 'PATCH', path, { rawBody: '{"processors":{"__proto__":[{}]}}', headers }), 403, 'insufficientRights');
      const removal = await call(hub, 'PATCH', path, { rawBody: '{"processors":{"constructor":null}}', headers: { ...JSON_TYPE, authorization: `Bearer ${noConnectors}` } });
      assertError(removal, 403, 'insufficientRights');
    });

    test('the processors of such a space run on writes: rules tag by such names, a schema checks own members only', async () => {
      const rules = Object.fromEntries(KEYS.map((key) => [key, '$.features[?(@.properties.k==1)]']));
      const schema = { type: 'object', properties: { properties: { type: 'object', required: ['toString'], properties: { constructor: { type: 'string' } } } } };
      const space = await createSpace(hub, {
        processors: { 'rule-tagger': [{ params: { taggingRules: rules } }], 'schema-validator': [{ params: { schema: JSON.stringify(schema) } }] },
      });
      const put = (features: Array<[string, string]>) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: collectionText(...features), headers: JSON_TYPE });
      // Every object answers to `toString` and `constructor`: the schema must ask the feature, not Object.prototype.
      assertError(await put([['no-toString', '{"k":1}']]), 400, 'schemaValidationFailed', 'no-toString', "required property 'toString'");
      const written = await put([['tagged', '{"k":1,"toString":"t"}'], ['untagged', '{"k":2,"toString":"t","__proto__":{"a":1}}']]);
      assert.equal(written.status, 200, written.text.slice(0, 300));
      assertError(await put([['bad-constructor', '{"toString":"t","constructor":5}']]), 400, 'schemaValidationFailed', 'constructor');
      const tagged = await call(hub, 'GET', `/hub/spaces/${space}/features/tagged`);
      const { properties } = tagged.body as { properties?: { '@ns:com:here:xyz'?: { tags?: string[] } } };
      assert.deepEqual(properties?.['@ns:com:here:xyz']?.tags, KEYS.map((key) => key.toLowerCase()), tagged.text.slice(0, 400));
      for (const key of KEYS) {
        const search = await call(hub, 'GET', `/hub/spaces/${space}/search?tags=${encodeURIComponent(key)}`);
        assert.deepEqual(idsOf(search), ['tagged'], `tags=${key}`);
      }
      const untagged = await call(hub, 'GET', `/hub/spaces/${space}/features/untagged`);
      assert.equal(JSON.stringify(JSON.parse(untagged.text).properties.__proto__), '{"a":1}');
    });

    test('a schema whose properties name __proto__ is refused with 400 naming where: ajv would not check it', async () => {
      const schema = JSON.stringify({ type: 'object', properties: { properties: { type: 'object', properties: { a: { type: 'string' } } } } })
        .replace('"a"', '"__proto__"');
      const processors = `{"schema-validator":[{"params":{"schema":${JSON.stringify(schema)}}}]}`;
      const created = await call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","processors":${processors}}`, headers: JSON_TYPE });
      assertError(created, 400, 'spaceValidation', 'processors.schema-validator[0].params.schema', '/properties/properties/properties', '__proto__');
      const patched = await call(hub, 'PATCH', `/hub/spaces/${space}`, { rawBody: `{"processors":${processors}}`, headers: JSON_TYPE });
      assertError(patched, 400, 'spaceValidation', '/properties/properties/properties');
      // A `const` is data, not a schema: naming __proto__ there is checked as any value is.
      const constant = JSON.stringify({ properties: { properties: { const: { properties: { __x__: 1 } } } } }).replace('__x__', '__proto__');
      const data = await call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","processors":{"schema-validator":[{"params":{"schema":${JSON.stringify(constant)}}}]}}`, headers: JSON_TYPE });
      assert.equal(data.status, 200, data.text.slice(0, 300));
    });

    test('search, statistics and OGC queryables and filters over properties of such names, searchable or not', async () => {
      const searchable = `{"__proto__":true,"constructor":true,"toString":false}`;
      const created = await call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","searchableProperties":${searchable}}`, headers: JSON_TYPE });
      assert.equal(created.status, 200, created.text.slice(0, 300));
      const space = created.body.id as string;
      const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
        rawBody: collectionText(['all', '{"__proto__":"p","constructor":"c","toString":"t"}'], ['none', '{"other":1}']), headers: JSON_TYPE,
      });
      assert.equal(written.status, 200, written.text.slice(0, 300));
      for (const [name, value] of [['__proto__', 'p'], ['constructor', 'c'], ['toString', 't']]) {
        assert.deepEqual(idsOf(await call(hub, 'GET', `/hub/spaces/${space}/search?p.${name}=${value}`)), ['all'], `p.${name}=${value}`);
        assert.deepEqual(idsOf(await call(hub, 'GET', `/hub/spaces/${space}/search?p.${name}!=x`)), ['all'], `p.${name}!=x: a missing property never matches`);
        assert.deepEqual(idsOf(await call(hub, 'GET', `/hub/spaces/${space}/search?p.${name}=.null`)), ['none'], `p.${name}=.null`);
        const items = await call(hub, 'GET', `/ogc/collections/${space}/items?filter=${encodeURIComponent(`"${name}"='${value}'`)}`);
        assert.deepEqual(idsOf(items), ['all'], `OGC filter on ${name}: ${items.text.slice(0, 300)}`);
      }
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal(statistics.status, 200, statistics.text.slice(0, 300));
      const properties = (statistics.body.properties as { value: Array<{ key: string; searchable: boolean }> }).value;
      const searchableOf = Object.fromEntries(properties.map((property) => [property.key, property.searchable]));
      assert.deepEqual([searchableOf.__proto__, searchableOf.constructor, searchableOf.toString, searchableOf.other], [true, true, false, false],
        `false makes a property not searchable: ${JSON.stringify(properties)}`);
      const queryables = await call(hub, 'GET', `/ogc/collections/${space}/queryables`);
      assert.equal(queryables.status, 200, queryables.text.slice(0, 300));
      const declared = (JSON.parse(queryables.text) as { properties: Record<string, { type?: string }> }).properties;
      for (const name of ['__proto__', 'constructor', 'toString']) {
        assert.ok(Object.hasOwn(declared, name), `queryable ${name}: ${queryables.text.slice(0, 300)}`);
        assert.equal(declared[name].type, 'string');
      }
    });

    test('an event stream filtered by such a property sees only features holding it, as search does', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const streams = ['constructor', 'toString'].map((name) => new EventStream(hub, `/hub/spaces/${space}/events?p.${name}!=x`));
      try {
        await Promise.all(streams.map((stream) => stream.opened()));
        const put = async (id: string, properties: string) => {
          const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: collectionText([id, properties]), headers: JSON_TYPE });
          assert.equal(response.status, 200, response.text.slice(0, 300));
        };
        await put('holds', '{"constructor":"c","toString":"t"}');
        await put('lacks', '{"other":1}');
        const seen = (event: ReceivedEvent) => (event.type === 'message'
          ? (event.data.inserted as { features: Array<{ id: string }> }).features.map((feature) => feature.id).join('+') : event.type);
        for (const stream of streams) {
          await stream.until('two versions', () => stream.events.length === 2);
          assert.deepEqual(stream.events.map(seen), ['holds', 'unmatched']);
        }
      } finally {
        for (const stream of streams) stream.close();
      }
    });

    test('a project holding such names keeps them as sent, through PATCH and PUT', async () => {
      for (const key of KEYS) {
        const k = JSON.stringify(key);
        const created = await call(hub, 'POST', '/project-api/projects', { rawBody: `{${k}:{${k}:1},"layers":[{${k}:2}]}`, headers: JSON_TYPE });
        assert.equal(created.status, 200, `POST ${key}: ${created.text.slice(0, 300)}`);
        assert.equal(memberText(created, key), `{${k}:1}`);
        const path = `/project-api/projects/${created.body.id as string}`;
        const patched = await call(hub, 'PATCH', path, { rawBody: `{${k}:{${k}:null,"b":3}}`, headers: JSON_TYPE });
        assert.equal(patched.status, 200, `PATCH ${key}: ${patched.text.slice(0, 300)}`);
        assert.equal(memberText(patched, key), '{"b":3}');
        assert.equal(memberText(await call(hub, 'GET', path), 'layers'), `[{${k}:2}]`);
        const replaced = await call(hub, 'PUT', path, { rawBody: `{${k}:5}`, headers: JSON_TYPE });
        assert.equal(memberText(replaced, key), '5', `PUT ${key}`);
        assert.equal(memberText(replaced, 'layers'), undefined, `PUT ${key} replaces the whole project`);
      }
    });

    test('such a name as an OGC format, a CQL2-JSON operator, a job format or a tweaks strength is refused with 400', async () => {
      const items = `/ogc/collections/${space}/items`;
      for (const name of NAMES) {
        const format = await call(hub, 'GET', `${items}?f=${name}`);
        assertRefused(format, 400, 'ogcInvalidFormat', `f=${name}`);
        for (const filter of [{ op: name, args: [{ property: 'a' }, 1] }, { op: '=', args: [{ op: name, args: [{ property: 'a' }] }, 1] }]) {
          const response = await call(hub, 'GET', `${items}?filter-lang=cql2-json&filter=${encodeURIComponent(JSON.stringify(filter))}`);
          assertRefused(response, 400, 'ogcInvalidFilter', `filter ${JSON.stringify(filter)}`);
        }
        assertRefused(await call(hub, 'GET', `${items}?filter-lang=${name}&filter=a%3D1`), 400, 'ogcUnsupportedFilterLang', `filter-lang=${name}`);
        const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: name } } });
        assertRefused(job, 400, 'invalidJob', `job format ${name}`);
        const strength = await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=0&south=0&east=2&north=2&tweaks=simplification&tweaks.strength=${name}`);
        assertRefused(strength, 400, 'invalidParameter', `tweaks.strength=${name}`);
      }
      const jobs = await call(hub, 'GET', '/hub/jobs');
      assert.equal(jobs.status, 200);
      assert.deepEqual(jobs.body, [], 'no job was created');
    });
  });
}
