// Unit tests for the sample of a large space and the folding of sampled features into statistics (API.md 5.9).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SAMPLE_RUN, type SampledFeature, sampleRuns, sampleStatistics, STATISTICS_SAMPLE } from '../../src/storage/shared/space-statistics.js';

describe('sampleRuns', () => {
  it('reads a space no longer than the sample whole', () => {
    assert.deepEqual(sampleRuns(7, 11), [7]);
    assert.deepEqual(sampleRuns(3, 3), [3]);
    assert.deepEqual(sampleRuns(1, 120, 200, 50), [1, 51, 101]);
  });

  it('places one run inside each equal stretch of a longer space, in order', () => {
    const first = 1001;
    const span = 1_000_000;
    const starts = sampleRuns(first, first + span - 1);
    assert.equal(starts.length * SAMPLE_RUN, STATISTICS_SAMPLE);
    const stretch = span / starts.length;
    starts.forEach((start, i) => {
      assert.ok(start >= first + i * stretch && start + SAMPLE_RUN <= first + (i + 1) * stretch, `run ${i}: ${start}`);
    });
  });

  it('answers the same for the same range', () => {
    assert.deepEqual(sampleRuns(1, 123_456), sampleRuns(1, 123_456));
  });

  it('does not fall into step with data that repeats with the stretch', () => {
    const runs = STATISTICS_SAMPLE / SAMPLE_RUN;
    // Runs starting at one residue of the stretch would see the same stretch position every time.
    const residues = new Set(sampleRuns(0, runs * 1000 - 1).map((start) => start % 1000));
    assert.ok(residues.size > runs / 2, `${residues.size} distinct places within the stretch`);
  });
});

describe('sampleStatistics', () => {
  const feature = (geometryType: string | null, bbox: SampledFeature['bbox'], properties: Record<string, unknown>): SampledFeature =>
    ({ geometryType, bbox, properties });
  const NS = '@ns:com:here:xyz';

  it('folds the sample and scales counts to the whole space', () => {
    const sample = [
      feature('Point', [1, 2, 1, 2], { name: 'a', size: 3, [NS]: { tags: ['x', 'y'] } }),
      feature('LineString', [-5, -10, 30, 40], { name: 'b', size: null, [NS]: { tags: ['y'] } }),
      feature(null, null, { name: 'c', list: [1], obj: { a: 1 }, [NS]: { tags: [] } }),
      feature('Point', [3, 4, 3, 4], { name: 4, [NS]: { tags: ['y'] } }),
    ];
    const stats = sampleStatistics(sample, 400);
    assert.deepEqual(stats.bbox, [-5, -10, 30, 40]);
    assert.deepEqual(stats.geometryTypes, ['LineString', 'Point']);
    assert.deepEqual(stats.tags, [{ key: 'y', count: 300 }, { key: 'x', count: 100 }]);
    assert.deepEqual(stats.properties, [
      { key: 'name', count: 400, datatype: 'string' },
      { key: 'size', count: 200, datatype: 'number' },
      { key: 'list', count: 100, datatype: 'array' },
      { key: 'obj', count: 100, datatype: 'object' },
    ]);
  });

  it('gives an empty sample empty members', () => {
    assert.deepEqual(sampleStatistics([], 0), { bbox: null, geometryTypes: [], tags: [], properties: [] });
  });
});
