// The export's text path (issue 25, section 3) on both engines: the CLI's GeoJSON and GeoJSONSeq exports, export jobs and `Accept: application/geo+json-seq` copy the stored feature texts with the hub's namespace cut out, and give each feature exactly as parsing it would.
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { writeFlatGeobuf } from '../../src/transfer/formats/flatgeobuf-writer.js';
import type { TransferFeature } from '../../src/transfer/transfer-feature.js';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { passOn, startProxy } from '../helpers/hub-proxy.js';
import { cli } from '../helpers/transfer-cli.js';
import { assertSameFlatGeobuf } from '../helpers/flatgeobuf-read-back.js';

const NS = '@ns:com:here:xyz';
const summaryOf = (stderr: string) => (JSON.parse(stderr.trim().split('\n').filter((line) => line.startsWith('{"summary"')).pop() ?? '{}') as { summary: Record<string, number> }).summary;
const ENV = { HUB_JOBS_POLL: '50ms' };

/** Features whose texts test the byte scanner: quotes, braces and brackets in strings, escapes, non-ASCII, a nested key named like the namespace, integer keys, empty and null values. */
const TRICKY = [
  {
    type: 'Feature', id: 'a', geometry: { type: 'Point', coordinates: [1.5, 2.25] },
    properties: {
      text: 'brace } quote " backslash \\ line\nbreak tab\t ü 😀 ,"@ns:com:here:xyz":{',
      nested: { [NS]: { keep: true }, list: [1, '}', { a: ']' }, [], {}] },
      7: 'integer key', empty: {}, none: null, half: 0.5, big: 12345678901234, yes: true,
    },
  },
  { type: 'Feature', id: 'b', geometry: null, properties: {} },
  { type: 'Feature', id: 'c "}\\ ü', geometry: { type: 'LineString', coordinates: [[0, 0, 5], [1, 1, 6]] }, properties: { [`${NS}x`]: 'not the namespace' } },
  // A foreign member: the export leaves it out (it parses such a feature instead of copying its text).
  { type: 'Feature', id: 'd', geometry: { type: 'Point', coordinates: [3, 4] }, properties: { p: 1 }, foreign: { [NS]: 1, q: '}' } },
];
const PLAIN = Array.from({ length: 25 }, (_, i) => ({ type: 'Feature', id: `p${i}`, geometry: { type: 'Point', coordinates: [i, 0.5 - i] }, properties: { i } }));

/** What an export holds for a written feature: its id, the geometry in 3D (as the hub stores it), the properties without the namespace, nothing else. */
function expected(feature: { id: string; geometry: { type: string; coordinates: unknown } | null; properties: object }): object {
  const pad = (value: unknown): unknown => (Array.isArray(value) && typeof value[0] === 'number' ? (value.length === 2 ? [...value, 0] : value) : Array.isArray(value) ? value.map(pad) : value);
  const geometry = feature.geometry === null ? null : { type: feature.geometry.type, coordinates: pad(feature.geometry.coordinates) };
  return { type: 'Feature', id: feature.id, geometry, properties: feature.properties };
}

/** Columns of every kind FlatGeobuf's header tells apart, and values that change a column's kind (integers then fractions, numbers then text), a null first, a property named `id`. */
const KINDS = [
  { type: 'Feature', id: 'k1', geometry: { type: 'Point', coordinates: [5, 6] }, properties: { whole: 1, mixed: 2, flag: true, later: null, id: 'a property', text: 'x' } },
  { type: 'Feature', id: 'k2', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }, properties: { whole: 2.5, mixed: 'two', flag: false, later: 12345678901234, text: 'é\u0000' } },
];
const ALL = [...TRICKY, ...PLAIN, ...KINDS];
const WANT = ALL.map(expected);

/**
 * The FlatGeobuf that the writer makes of these features given as objects, each read from its parse: what the text path
 * must give byte for byte. The properties come before the geometry, so the spooled text is not a stored text's shape
 * and the writer encodes the parsed object, not the bytes.
 */
async function flatGeobufOfObjects(features: object[]): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = writeFlatGeobuf(out);
  for (const { type, id, properties, geometry } of features as TransferFeature[]) await writer.write({ type, id, properties, geometry });
  await writer.end();
  return Buffer.concat(chunks);
}

/** An address of this machine that is not a loopback one: the CLI asks a hub there for compressed answers. */
const outsideAddress = Object.values(networkInterfaces()).flat().find((address) => address?.family === 'IPv4' && !address.internal)?.address;

/** A proxy to the hub on that address, counting the answers it passed on compressed. */
async function remoteProxy(hub: HubProcess, address: string): Promise<{ url: string; compressed: () => number; close: () => void }> {
  let compressed = 0;
  const proxy = await startProxy((incoming, outgoing) => {
    incoming.pipe(passOn(hub, incoming, outgoing, {
      onAnswer: (answer) => {
        if (answer.headers['content-encoding'] !== undefined) compressed++;
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    }));
  }, address);
  return { url: proxy.url, compressed: () => compressed, close: proxy.close };
}

/** A proxy to the hub that records the `Accept` of each iterate request and, as an older hub would, answers iterate with GeoJSON whatever it asked for (`asOlderHub`). */
async function iterateProxy(hub: HubProcess, asOlderHub: boolean): Promise<{ url: string; accepts: string[]; close: () => void }> {
  const accepts: string[] = [];
  const proxy = await startProxy((incoming, outgoing) => {
    const headers = { ...incoming.headers };
    if (incoming.url?.includes('/iterate')) {
      accepts.push(String(headers.accept));
      if (asOlderHub) headers.accept = 'application/geo+json';
    }
    incoming.pipe(passOn(hub, incoming, outgoing, { headers }));
  });
  return { url: proxy.url, accepts, close: proxy.close };
}

/**
 * A proxy to the hub that answers the n-th iterate request (0-based) with the status `refuse(n)` gives instead of
 * passing it on (with `Retry-After: 0`), and records each iterate request's handle in order.
 */
async function refusingProxy(hub: HubProcess, refuse: (n: number) => number | undefined): Promise<{ url: string; handles: string[]; close: () => void }> {
  const handles: string[] = [];
  const proxy = await startProxy((incoming, outgoing) => {
    if (incoming.url?.includes('/iterate')) {
      const status = refuse(handles.length);
      handles.push(new URL(incoming.url, 'http://proxy.invalid').searchParams.get('handle') ?? '');
      if (status !== undefined) {
        incoming.resume();
        outgoing.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
        outgoing.end(JSON.stringify({ type: 'ErrorResponse', error: 'Exception', errorMessage: `proxy says ${status}` }));
        return;
      }
    }
    incoming.pipe(passOn(hub, incoming, outgoing));
  });
  return { url: proxy.url, handles, close: proxy.close };
}

/**
 * A proxy to the hub that sends each iterate page's headers at once but holds its body until `ahead` later pages are
 * asked for (the chain's last page releases every body held), or for `holdMs`, counted as late. A client that asks for
 * the page after next only once it has read a page's body is late on every page but the last ones with `ahead` 2; one
 * that keeps at most two pages asked for beyond the one it reads is late with `ahead` 3.
 */
async function headFirstProxy(hub: HubProcess, ahead: number, holdMs: number): Promise<{ url: string; late: () => number; close: () => void }> {
  let late = 0;
  let asked = 0;
  const held = new Map<number, () => void>();
  const release = (upTo: number) => {
    for (const [page, send] of held) {
      if (page > upTo) continue;
      held.delete(page);
      send();
    }
  };
  const proxy = await startProxy((incoming, outgoing) => {
    const page = incoming.url?.includes('/iterate') === true ? asked++ : undefined;
    if (page !== undefined) release(page - ahead);
    const forwarded = passOn(hub, incoming, outgoing, {
      onAnswer: (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          outgoing.flushHeaders();
          const send = () => outgoing.end(Buffer.concat(chunks));
          if (page === undefined || !/rel="?next/.test(String(answer.headers.link ?? ''))) {
            release(Infinity);
            send();
            return;
          }
          if (asked - 1 - ahead >= page) {
            send();
            return;
          }
          const timer = setTimeout(() => {
            late++;
            held.delete(page);
            send();
          }, holdMs);
          held.set(page, () => {
            clearTimeout(timer);
            send();
          });
        });
      },
    });
    incoming.pipe(forwarded);
  });
  return { url: proxy.url, late: () => late, close: proxy.close };
}

/** Each line parsed, after checking that it is compact JSON as the hub serializes it (no text left over, nothing re-spaced). */
function parsedLines(text: string, separator = ''): object[] {
  const lines = text.split('\n');
  assert.equal(lines.pop(), '', 'ends in a line feed');
  return lines.map((line) => {
    assert.ok(line.startsWith(separator), 'record separator');
    const body = line.slice(separator.length);
    const value = JSON.parse(body) as object;
    assert.equal(JSON.stringify(value), body, 'compact, as JSON.stringify writes it');
    return value;
  });
}

describe('export by feature texts', () => {
  for (const backend of BACKENDS) {
    describe(backend, { concurrency: 4 }, () => {
      let hub: HubProcess;
      let space: string;
      before(async () => {
        hub = await startHub({ backend, env: ENV });
        space = await createSpaceWith(hub, ALL);
      });
      after(async () => {
        await hub?.stop();
      });

      test('the CLI writes GeoJSONSeq and GeoJSON over several pages with each feature as written, without the namespace', async () => {
        const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '3']);
        assert.equal(seq.code, 0, seq.stderr);
        assert.deepEqual(parsedLines(seq.stdout), WANT);
        const collection = await cli(hub, ['export', '--space', space, '--format', 'geojson', '--chunk', '7']);
        assert.equal(collection.code, 0, collection.stderr);
        assert.deepEqual((JSON.parse(collection.stdout) as { features: object[] }).features, WANT);
      });

      test('the CLI writes FlatGeobuf from the texts as the writer does from the parsed features (read back feature by feature)', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'export-text-'));
        try {
          const output = join(dir, 'export.fgb');
          const exported = await cli(hub, ['export', '--space', space, '--format', 'flatgeobuf', '--output', output, '--chunk', '4']);
          assert.equal(exported.code, 0, exported.stderr);
          const file = readFileSync(output);
          assert.ok(file.length > 1000);
          assertSameFlatGeobuf(file, await flatGeobufOfObjects(WANT));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });

      test('pages a remote hub compresses are decoded: the same file as from the hub on loopback', { skip: outsideAddress === undefined && 'no address but loopback' }, async () => {
        const proxy = await remoteProxy(hub, outsideAddress as string);
        try {
          const remote = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '20'], { url: proxy.url });
          assert.equal(remote.code, 0, remote.stderr);
          assert.ok(proxy.compressed() > 0, 'the hub compressed pages for a remote client');
          assert.deepEqual(parsedLines(remote.stdout), WANT);
        } finally {
          proxy.close();
        }
      });

      test('GeoJSONSeq is written by the hub (iterate as application/geo+json-seq, its Link followed); a hub answering GeoJSON gives the same file', async () => {
        const current = await iterateProxy(hub, false);
        const older = await iterateProxy(hub, true);
        try {
          const copied = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '3'], { url: current.url });
          assert.equal(copied.code, 0, copied.stderr);
          assert.equal(current.accepts.length, Math.ceil(ALL.length / 3) + (ALL.length % 3 === 0 ? 1 : 0), 'every page asked for, by the Link header');
          assert.ok(current.accepts.every((accept) => accept === 'application/geo+json-seq'), current.accepts.join());
          assert.deepEqual(parsedLines(copied.stdout), WANT);
          assert.equal(summaryOf(copied.stderr).written, ALL.length);
          const parsed = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '3'], { url: older.url });
          assert.equal(parsed.code, 0, parsed.stderr);
          assert.ok(older.accepts.slice(1).every((accept) => accept === 'application/geo+json'), 'after a GeoJSON answer, GeoJSON is asked for');
          assert.equal(parsed.stdout, copied.stdout);
        } finally {
          current.close();
          older.close();
        }
      });

      test('each sequence page is asked for when the headers of the page before arrive, two pages ahead of the body read (GeoJSONSeq and FlatGeobuf)', async () => {
        const proxy = await headFirstProxy(hub, 2, 2000);
        const dir = mkdtempSync(join(tmpdir(), 'export-text-'));
        try {
          const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '5'], { url: proxy.url });
          assert.equal(seq.code, 0, seq.stderr);
          assert.deepEqual(parsedLines(seq.stdout), WANT);
          const output = join(dir, 'early.fgb');
          const fgb = await cli(hub, ['export', '--space', space, '--format', 'flatgeobuf', '--chunk', '5', '--output', output], { url: proxy.url });
          assert.equal(fgb.code, 0, fgb.stderr);
          assertSameFlatGeobuf(readFileSync(output), await flatGeobufOfObjects(WANT));
          assert.equal(proxy.late(), 0, 'pages whose body was read before the page after next was asked for');
        } finally {
          proxy.close();
          rmSync(dir, { recursive: true, force: true });
        }
      });

      test('no more than two pages are asked for beyond the one whose body is read (what the export holds is bounded)', async () => {
        const proxy = await headFirstProxy(hub, 3, 1000);
        try {
          const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '10'], { url: proxy.url });
          assert.equal(seq.code, 0, seq.stderr);
          assert.deepEqual(parsedLines(seq.stdout), WANT);
          assert.ok(proxy.late() > 0, 'a third page ahead was asked for before a page\'s body was read');
        } finally {
          proxy.close();
        }
      });

      test('pages asked for ahead are retried on 503 and written in order; a page refused with 400 ends the export with exit 2', async () => {
        const flaky = await refusingProxy(hub, (n) => (n % 3 === 1 ? 503 : undefined));
        try {
          const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '5', '--retry-delay', '10'], { url: flaky.url });
          assert.equal(seq.code, 0, seq.stderr);
          assert.deepEqual(parsedLines(seq.stdout), WANT);
          const retries = flaky.handles.filter((_, n) => n % 3 === 1).length;
          assert.ok(retries >= 2, flaky.handles.join());
          assert.equal(summaryOf(seq.stderr).retries, retries);
        } finally {
          flaky.close();
        }
        const refusing = await refusingProxy(hub, (n) => (n === 3 ? 400 : undefined));
        try {
          const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '5', '--retry-delay', '10'], { url: refusing.url });
          assert.equal(seq.code, 2, seq.stderr);
          assert.match(seq.stderr, /400 proxy says 400/);
          assert.deepEqual(parsedLines(seq.stdout), WANT.slice(0, 15), 'the pages before the refused one, in order');
          assert.equal(refusing.handles.length, 4, 'no page asked for after the refused one');
        } finally {
          refusing.close();
        }
      });

      test('a sequence page larger than the hub holds in memory (4 MiB) is written through a file, whole', async () => {
        const long = 'x'.repeat(100_000);
        const big = Array.from({ length: 60 }, (_, i) => ({ type: 'Feature', id: `big${i}`, geometry: { type: 'Point', coordinates: [i, i] }, properties: { long, i } }));
        const bigSpace = await createSpaceWith(hub, big);
        const answer = await call(hub, 'GET', `/hub/spaces/${bigSpace}/iterate?limit=100`, { headers: { accept: 'application/geo+json-seq' } });
        assert.equal(answer.status, 200, answer.text);
        assert.ok(answer.text.length > 6_000_000);
        assert.deepEqual(parsedLines(answer.text, '\u001e'), big.map(expected));
      });

      test('--bbox still filters on the text path', async () => {
        const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--bbox', '0.5,-3.5,3.5,4.5']);
        assert.equal(seq.code, 0, seq.stderr);
        assert.deepEqual(parsedLines(seq.stdout).map((feature) => (feature as { id: string }).id), ['a', 'c "}\\ ü', 'd', 'p1', 'p2', 'p3', 'k2']);
      });

      test('iterate with Accept: application/geo+json-seq gives the same features', async () => {
        const answer = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1000`, { headers: { accept: 'application/geo+json-seq' } });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(parsedLines(answer.text, '\u001e'), WANT);
      });

      test('an export job writes the same GeoJSONSeq', async () => {
        const created = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSONSEQ' } } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        let state = '';
        for (let i = 0; i < 400 && !['SUCCEEDED', 'FAILED'].includes(state); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          state = (await call(hub, 'GET', `/hub/jobs/${id}/status`)).body.state as string;
        }
        assert.equal(state, 'SUCCEEDED');
        const output = await call(hub, 'GET', `/hub/jobs/${id}/outputs`);
        assert.equal(output.status, 200);
        assert.deepEqual(parsedLines(output.text), WANT);
      });
    });
  }
});
