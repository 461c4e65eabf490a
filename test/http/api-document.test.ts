// The OpenAPI document of the whole hub: generated from the route table, valid for a maintained validator, served at both places.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { routes } from '../../src/http/routes.js';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

interface Operation { summary?: string; parameters?: Array<{ name: string; in: string }> }
type Document = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, Operation & { url?: string }> & { servers?: Array<{ url: string }> }> };

/** Where a route is in the document: OGC routes below /ogc are written relative to it (their path item names it as server). */
function find(document: Document, method: string, path: string): Operation | undefined {
  const templated = path.replace(/:([A-Za-z]+)/g, '{$1}');
  const relative = templated.startsWith('/ogc/') ? templated.slice('/ogc'.length) : templated;
  const item = document.paths[relative];
  if (templated.startsWith('/ogc/')) assert.match(item?.servers?.[0]?.url ?? '', /\/ogc$/, `${path}: its server is the OGC root`);
  return item?.[method.toLowerCase()] as Operation | undefined;
}

/** The validator dereferences in place: it gets a copy. */
const validate = (document: unknown) => SwaggerParser.validate(structuredClone(document) as never);

for (const backend of BACKENDS) {
  describe(`API document (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub?.stop(); });

    test('stable.yaml is public, valid OpenAPI 3.0, and lists every route with its summary and declared query parameters', async () => {
      const response = await call(hub, 'GET', '/hub/static/openapi/stable.yaml', { anonymous: true });
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^application\/yaml/);
      const document = parse(response.text) as Document;
      assert.equal(document.openapi, '3.0.3');
      await validate(document);
      assert.equal(document.servers[0].url, hub.url);
      for (const route of routes) {
        const operation = find(document, route.method, route.path);
        assert.ok(operation, `${route.method} ${route.path} is missing from the document`);
        assert.equal(operation.summary, route.summary);
        const names = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
        assert.deepEqual(names, [...(route.query ?? [])], `${route.method} ${route.path}: query parameters`);
      }
      const again = await call(hub, 'GET', '/hub/static/openapi/stable.yaml', { anonymous: true, headers: { 'if-none-match': response.headers.get('etag') ?? '' } });
      assert.equal(again.status, 304);
    });

    test('/ogc/api is the same document plus the caller\'s collections with their queryables', async () => {
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'api document' } });
      const space = created.body.id as string;
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'a', geometry: null, properties: { name: 'k3' } }] } });
      const response = await call(hub, 'GET', '/ogc/api?f=json');
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^application\/vnd\.oai\.openapi\+json;version=3\.0/);
      const document = JSON.parse(response.text) as Document;
      await validate(document);
      for (const route of routes) assert.ok(find(document, route.method, route.path), `${route.method} ${route.path} is missing from /ogc/api`);
      const items = document.paths[`/collections/${space}/items`];
      assert.ok(items?.get, `the items path of ${space}`);
      assert.ok(items.get.parameters?.some((parameter) => parameter.name === 'name'), 'its queryable "name"');
      const yaml = parse((await call(hub, 'GET', '/hub/static/openapi/stable.yaml', { anonymous: true })).text) as Document;
      assert.deepEqual(Object.keys(yaml.paths).filter((key) => !key.startsWith('/collections/') || key.includes('{')),
        Object.keys(document.paths).filter((key) => !key.startsWith('/collections/') || key.includes('{')), 'the same routes at both places');
    });
  });
}
