// Black-box tests of the event stream (GET /hub/spaces/{id}/events, issue 24 section 1) on both engines, with the `eventsource` package as the client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EventStream, rawStream, type ReceivedEvent } from '../helpers/event-streams.js';
import { assertError, call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { pause } from '../helpers/raw-http.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';
import { issueToken } from '../helpers/tokens.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, coordinates: [number, number], properties: Record<string, unknown> = {}, tags: string[] = []) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates }, properties: { ...properties, [NS]: { tags } } });

interface Collection { features: Array<{ id: string; properties: Record<string, unknown> }> }

/** A changeset event as `kind:id` texts in the order sent. */
function summary(event: ReceivedEvent): string[] {
  return (['inserted', 'updated', 'deleted'] as const).flatMap((kind) => (event.data[kind] as Collection).features.map((feature) => `${kind}:${feature.id}`));
}

const idsOf = (events: ReceivedEvent[]) => events.map((event) => Number(event.id));

for (const backend of BACKENDS) {
  describe(`event stream (${backend})`, () => {
    let hub: HubProcess;
    let session: string;
    before(async () => {
      hub = await startHub({ backend, env: { HUB_EVENT_HEARTBEAT: '300', HUB_EVENT_BUFFER: '64k', HUB_EVENT_STALL: '1s', HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
      session = await login(hub, 'admin', ADMIN_PASSWORD);
    });
    after(async () => { await hub.stop(); });

    const put = async (space: string, features: object[]) => {
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      assert.equal(response.status, 200, response.text);
    };
    const remove = async (space: string, id: string) => assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/${id}`)).status, 204);
    const streams: EventStream[] = [];
    const stream = (path: string, token?: string) => {
      const opened = new EventStream(hub, path, token ?? hub.token);
      streams.push(opened);
      return opened;
    };
    after(() => { for (const opened of streams) opened.close(); });

    test('each committed version is one event, in order, carrying its changeset; id is the version', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      await put(space, [point('a', [1, 1])]);
      const events = stream(`/hub/spaces/${space}/events`);
      await events.opened();
      await put(space, [point('a', [1, 2], { n: 2 }), point('b', [2, 2])]);
      await remove(space, 'a');
      await events.until('versions 1 and 2', () => events.changesets.length === 2);
      assert.deepEqual(idsOf(events.changesets), [1, 2], 'from HEAD on: version 0 was written before the stream opened');
      assert.deepEqual(events.changesets.map(summary), [['inserted:b', 'updated:a'], ['deleted:a']]);
      for (const event of events.changesets) {
        const changeset = await call(hub, 'GET', `/hub/spaces/${space}/changesets/${event.id}`);
        assert.deepEqual({ ...event.data, type: 'Changeset' }, changeset.body, 'the event is the version\'s changeset');
      }
      assert.equal(events.changesets[0].data.version, 1);
      assert.equal(typeof events.changesets[0].data.author, 'string');
      assert.equal(typeof events.changesets[0].data.createdAt, 'number');
    });

    test('a write reaches an open stream as it commits, not only when the stream looks again a second later', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const events = stream(`/hub/spaces/${space}/events`);
      await events.opened();
      const latencies: number[] = [];
      for (let i = 0; i < 10; i++) {
        const start = Date.now();
        await put(space, [point('x', [i, 0])]);
        await events.until(`version ${i}`, () => events.changesets.length === i + 1);
        latencies.push(Date.now() - start);
      }
      latencies.sort((x, y) => x - y);
      // Woken by the safety net alone, half of them would take 500 ms or more.
      assert.ok(latencies[5] < 300, `median ${latencies[5]} ms: ${latencies.join(', ')}`);
    });

    test('?since= and Last-Event-ID replay from the history: resume after a disconnect with no gap and no duplicate', async () => {
      const space = await createSpace(hub, { versionsToKeep: 1000 });
      const first = stream(`/hub/spaces/${space}/events?since=-1`);
      for (let i = 0; i < 5; i++) await put(space, [point(`f${i}`, [i, i])]);
      await first.until('five versions', () => first.changesets.length === 5);
      first.close();
      const lastSeen = first.changesets[4].id;
      for (let i = 5; i < 10; i++) await put(space, [point(`f${i}`, [i, i])]);
      const resumed = stream(`/hub/spaces/${space}/events?since=${lastSeen}`);
      await resumed.until('the rest', () => resumed.changesets.length === 5);
      assert.deepEqual(idsOf([...first.changesets, ...resumed.changesets]), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // What EventSource sends when it reconnects wins over the URL's since=.
      const raw = rawStream(hub, `/hub/spaces/${space}/events?since=1`, { 'last-event-id': '7' });
      await waitFor('versions 8 and 9', () => raw.body.includes('id: 9\n'));
      assert.ok(!raw.body.includes('id: 7\n') && raw.body.includes('id: 8\n'), raw.body.slice(0, 300));
      raw.socket.destroy();
    });

    test('many writes from concurrent writers: every version once, in order', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100_000 });
      const events = stream(`/hub/spaces/${space}/events?since=-1`);
      const writes = 300;
      let next = 0;
      const writer = async () => {
        for (let i = next++; i < writes; i = next++) await put(space, [point(`w${i}`, [i % 180, 0])]);
      };
      await Promise.all(Array.from({ length: 8 }, writer));
      await events.until('every version', () => events.changesets.length >= writes, 60_000);
      assert.deepEqual(idsOf(events.changesets), Array.from({ length: writes }, (_, i) => i));
      const written = events.changesets.flatMap(summary).sort();
      assert.deepEqual(written, Array.from({ length: writes }, (_, i) => `inserted:w${i}`).sort());
    });

    test('a version no longer kept: a reset event naming HEAD and the oldest kept version, then the stream goes on', async () => {
      const space = await createSpace(hub, { versionsToKeep: 3 });
      for (let i = 0; i < 6; i++) await put(space, [point('x', [i, 0])]);
      const events = stream(`/hub/spaces/${space}/events?since=0`);
      await events.until('the reset', () => events.events.length >= 1);
      assert.deepEqual(events.events[0], { type: 'reset', id: '5', data: { type: 'Reset', version: 5, oldestKept: 3 } });
      await put(space, [point('x', [9, 0])]);
      await events.until('version 6', () => events.changesets.length === 1);
      assert.equal(events.changesets[0].id, '6');
      // Resuming from version 2 (whose successor 3 is kept) replays without a reset.
      const kept = stream(`/hub/spaces/${space}/events?since=3`);
      await kept.until('versions 4 to 6', () => kept.changesets.length === 3);
      assert.deepEqual(kept.events.map((event) => event.type), ['message', 'message', 'message']);
    });

    test('tags, p.* and a bbox narrow the events to features that matched before or after the change', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      await put(space, [point('in', [1, 1], { kind: 'shop' }, ['red']), point('out', [50, 50], { kind: 'shop' }, ['red']), point('other', [1, 1], { kind: 'park' }, ['blue'])]);
      const box = stream(`/hub/spaces/${space}/events?west=0&south=0&east=10&north=10`);
      const tags = stream(`/hub/spaces/${space}/events?tags=red`);
      const property = stream(`/hub/spaces/${space}/events?p.kind=shop`);
      await Promise.all([box.opened(), tags.opened(), property.opened()]);
      await put(space, [point('in', [60, 60], { kind: 'shop' }, ['red'])]); // 1: moves out of the box
      await put(space, [point('out', [51, 51], { kind: 'shop' }, ['red'])]); // 2: outside the box before and after
      await put(space, [point('other', [2, 2], { kind: 'shop' }, ['red'])]); // 3: becomes a red shop
      await remove(space, 'out'); // 4: a red shop outside the box deleted
      await put(space, [point('other', [3, 3], { kind: 'park' }, ['blue'])]); // 5: a red shop no more
      for (const events of [box, tags, property]) await events.until('five versions', () => events.events.length === 5);
      const seen = (events: EventStream) => events.events.map((event) => (event.type === 'message' ? `${event.id}:${summary(event).join('+')}` : `${event.id}:${event.type}`));
      assert.deepEqual(seen(box), ['1:updated:in', '2:unmatched', '3:updated:other', '4:unmatched', '5:updated:other']);
      assert.deepEqual(seen(tags), ['1:updated:in', '2:updated:out', '3:updated:other', '4:deleted:out', '5:updated:other']);
      assert.deepEqual(seen(property), seen(tags));
      assert.deepEqual(box.events[1].data, { type: 'Unmatched', version: 2 });
    });

    test('a heartbeat comment comes at the configured interval', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const raw = rawStream(hub, `/hub/spaces/${space}/events`);
      await pause(1100);
      raw.socket.destroy();
      assert.match(raw.head, /^HTTP\/1\.1 200/);
      assert.match(raw.head, /content-type: text\/event-stream/i);
      const beats = raw.body.split(': heartbeat\n\n').length - 1;
      assert.ok(beats >= 3 && beats <= 6, `${beats} heartbeats in 1.1 s at 300 ms (one when the stream opens)`);
    });

    test('a client that stops reading is disconnected with the version to resume from, never buffered without bound; a slow one is waited for', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10_000 });
      const raw = rawStream(hub, `/hub/spaces/${space}/events?since=-1`, {}, true);
      // Events under the stream's 64 KiB pieces, so that the buffer fills between events: 16 MB in all, far past the
      // 64 KiB buffer and the 4 to 5 MB the sockets hold.
      const filler = 'x'.repeat(60_000);
      const versions = 280;
      for (let i = 0; i < versions; i += 20) {
        await put(space, Array.from({ length: 1 }, () => point('big', [0, 0], { filler, i })));
        await Promise.all(Array.from({ length: 19 }, (_, j) => call(hub, 'PATCH', `/hub/spaces/${space}/features/big`, { body: point('big', [0, 0], { filler, i: i + j + 1 }) })));
      }
      await pause(1500);
      raw.socket.resume();
      await waitFor('the hub to close the stream', () => raw.closed, 20_000);
      const ids = [...raw.body.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
      const last = /event: disconnect\ndata: (.*)\n\n$/.exec(raw.body);
      assert.ok(last, `the stream ends with a disconnect event: …${raw.body.slice(-300)}`);
      const disconnect = JSON.parse(last[1]) as { reason: string; resumeAfter: number };
      assert.equal(disconnect.reason, 'slowConsumer');
      assert.equal(disconnect.resumeAfter, ids[ids.length - 1], 'it names the last version sent');
      assert.ok(ids.length < versions / 2, `only ${ids.length} of ${versions} versions were sent before the client was cut off`);
      assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i));
      const resumed = stream(`/hub/spaces/${space}/events?since=${disconnect.resumeAfter}`);
      await resumed.until('the rest', () => resumed.changesets.length === versions - ids.length, 30_000);
      assert.equal(resumed.changesets[0].id, String(disconnect.resumeAfter + 1));
    });

    test('rights: 401 without a token, 403 without readFeatures on the space, 404 for an unknown space', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/events`, { anonymous: true })).status, 401);
      const stranger = await issueToken(hub, { aid: 'stranger', urm: { 'xyz-hub': { readFeatures: [{ owner: 'someone-else' }] } } });
      const refused = await call(hub, 'GET', `/hub/spaces/${space}/events`, { headers: { authorization: `Bearer ${stranger.token}` } });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.type, 'ErrorResponse');
      assert.equal((await call(hub, 'GET', '/hub/spaces/no-such-space/events')).status, 404);
    });

    test('a space unshared while another account streams it: the next write is not sent, the stream ends refused', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10, shared: true, owner: 'owner-of-shared' });
      const stranger = await issueToken(hub, { aid: 'stranger-of-shared', urm: { 'xyz-hub': { readFeatures: [{ owner: 'stranger-of-shared' }] } } });
      const events = stream(`/hub/spaces/${space}/events`, stranger.token);
      await events.opened();
      await put(space, [point('a', [0, 0], { n: 'shared' })]);
      await events.until('version 0', () => events.changesets.length === 1);
      // The write comes right after the PATCH, well within the stream's periodic look (1 s): it was sent before.
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { shared: false } })).status, 200);
      await put(space, [point('b', [0, 0], { n: 'written after unsharing' })]);
      await events.until('the end of the stream', () => events.events.some((event) => event.type === 'disconnect'), 5000);
      assert.deepEqual(idsOf(events.changesets), [0], 'nothing written after unsharing was sent');
      assert.ok(!JSON.stringify(events.events).includes('written after unsharing'));
      const last = events.events[events.events.length - 1];
      assert.equal(last.data.reason, 'insufficientRights');
      assert.equal(last.data.resumeAfter, 0);
    });

    test('a token deleted while streaming ends the stream', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10, shared: false });
      const created = await send(hub, 'POST', '/token-api/tokens', { cookie: session, body: { urm: { 'xyz-hub': { readFeatures: [{}] } } } });
      assert.equal(created.status, 200, created.text);
      const { token } = created.json as { token: string };
      const events = stream(`/hub/spaces/${space}/events`, token);
      await events.opened();
      await put(space, [point('a', [0, 0])]);
      await events.until('version 0', () => events.changesets.length === 1);
      const deleted = await send(hub, 'DELETE', `/token-api/tokens/${token}`, { cookie: session });
      assert.equal(deleted.status, 204, deleted.text);
      await events.until('the end of the stream', () => events.events.some((event) => event.type === 'disconnect'), 5000);
      assert.equal(events.events[events.events.length - 1].data.reason, 'unauthorized');
      // EventSource reconnects, and the hub refuses the deleted token: the client stops.
      await events.until('the refused reconnect', () => events.errors.some((error) => error.code === 401), 10_000);
      await put(space, [point('b', [0, 0])]);
      await pause(300);
      assert.equal(events.changesets.length, 1, 'nothing after the deletion');
    });

    test('a token whose exp passes while streaming ends the stream at that time, saying why', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10, shared: false });
      // Whole Unix seconds; at least 2 s ahead, so the stream is open and has an event before it passes.
      const exp = Math.floor(Date.now() / 1000) + 3;
      const created = await send(hub, 'POST', '/token-api/tokens', { cookie: session, body: { exp, urm: { 'xyz-hub': { readFeatures: [{}] } } } });
      assert.equal(created.status, 200, created.text);
      const { token } = created.json as { token: string };
      const events = stream(`/hub/spaces/${space}/events`, token);
      await events.opened();
      await put(space, [point('a', [0, 0])]);
      await events.until('version 0', () => events.changesets.length === 1);
      let endedAt = 0;
      await events.until('the end of the stream', () => {
        if (events.events.some((event) => event.type === 'disconnect')) endedAt ||= Date.now();
        return endedAt > 0;
      }, 8000);
      const last = events.events[events.events.length - 1];
      assert.equal(last.type, 'disconnect');
      assert.deepEqual({ reason: last.data.reason, resumeAfter: last.data.resumeAfter }, { reason: 'tokenExpired', resumeAfter: 0 });
      assert.match(String(last.data.message), /expired at \d{4}-/);
      // A timer at exp, not the next look (every second) or token check (every 5 s).
      const late = endedAt - exp * 1000;
      assert.ok(late >= -50 && late < 400, `the stream ended ${late} ms after exp`);
      await events.until('the refused reconnect', () => events.errors.some((error) => error.code === 401), 10_000);
    });

    test('bad requests are 400s naming what is wrong', async () => {
      const plain = await createSpace(hub);
      assertError(await call(hub, 'GET', `/hub/spaces/${plain}/events`), 400, 'noHistory', 'versionsToKeep');
      const versioned = await createSpace(hub, { versionsToKeep: 10 });
      await put(versioned, [point('a', [0, 0])]);
      const composite = await createSpace(hub, { versionsToKeep: 10, extends: { spaceId: versioned } });
      assertError(await call(hub, 'GET', `/hub/spaces/${composite}/events`), 400, 'historyOfLayers');
      const events = (query: string, headers: Record<string, string> = {}) => call(hub, 'GET', `/hub/spaces/${versioned}/events${query}`, { headers });
      assertError(await events('?since=abc'), 400, 'invalidParameter', 'since');
      assertError(await events('?since=-2'), 400, 'invalidParameter', 'since');
      assertError(await events('?since=5'), 400, 'invalidParameter', 'since', 'HEAD (0)');
      assertError(await events('', { 'last-event-id': 'x' }), 400, 'invalidParameter', 'Last-Event-ID');
      assertError(await events('?west=0&south=0&east=1'), 400, 'invalidParameter', 'north');
      assertError(await events('?west=0&south=0&east=1&north=100'), 400, 'invalidCoordinate');
      assertError(await events('?p.a>=.null'), 400, 'invalidPropertyFilter', '.null');
    });
  });
}

async function waitFor(what: string, done: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await pause(20);
  }
}
