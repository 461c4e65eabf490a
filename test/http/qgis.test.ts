// QGIS itself (issue 26, section 5): PyQGIS opens a space as an OAPIF layer, applies a subset filter and counts the features; skipped where Debian's QGIS is not installed.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { point } from '../helpers/features.js';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';

/** Debian's python3 with its python3-qgis, not a python3 of pyenv or a virtualenv that comes first on the PATH. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(ROOT, 'test', 'fixtures', 'qgis-oapif.py');

function qgisMissing(): string | undefined {
  try {
    execFileSync(PYTHON, ['-c', 'import qgis.core'], { stdio: 'ignore', env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } });
    return undefined;
  } catch {
    return `PyQGIS is not installed (${PYTHON} cannot import qgis.core): apt-get install --no-install-recommends qgis python3-qgis`;
  }
}

interface QgisCounts {
  valid: boolean;
  error?: string;
  all: number;
  subsetAccepted: boolean;
  filteredIds: string[];
  filtered: number;
}

function openInQgis(hub: HubProcess, collection: string, subset: string): Promise<QgisCounts> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, `${hub.url}/ogc`, collection, subset], { env: { ...process.env, QT_QPA_PLATFORM: 'offscreen', HUB_TOKEN: hub.token }, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`PyQGIS failed: ${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as QgisCounts);
    });
  });
}

const missing = qgisMissing();
const KINDS = ['park', 'lake', 'forest'];

for (const backend of BACKENDS) {
  describe(`QGIS OAPIF layer (${backend})`, { skip: missing }, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpaceWith(hub, Array.from({ length: 30 }, (_, i) => point(`q${i}`, { kind: KINDS[i % 3], n: i }, [i / 10, i / 20])));
    });
    after(async () => { await hub.stop(); });

    test('PyQGIS opens the space as an OAPIF layer, filters it with a subset string and counts the hub\'s matching features', async () => {
      const expected = await call(hub, 'GET', `/hub/spaces/${space}/search?p.kind=park&limit=100`);
      const ids = (expected.body.features ?? []).map((feature) => feature.id).sort();
      assert.equal(ids.length, 10);
      const counts = await openInQgis(hub, space, '"kind" = \'park\' AND "n" >= 6');
      assert.ok(counts.valid, counts.error);
      assert.equal(counts.all, 30);
      assert.ok(counts.subsetAccepted);
      assert.deepEqual(counts.filteredIds, ids.filter((id) => Number(id.slice(1)) >= 6));
      assert.equal(counts.filtered, 8);
    });
  });
}
