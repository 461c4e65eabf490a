// Unit tests for the sample of a large space and the folding of sampled features into statistics (API.md 5.9).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type SampledFeature, samplePositions, sampleStatistics, STATISTICS_SAMPLE } from '../../src/storage/shared/space-statistics.js';

describe('samplePositions', () => {
  it('takes every sequence of a space no longer than the sample', () => {
    assert.deepEqual(samplePositions(7, 11), [7, 8, 9, 10, 11]);
    assert.deepEqual(samplePositions(3, 3), [3]);
  });

  it('places one position in each equal stretch of a longer space, in order', () => {
    const first = 1001;
    const span = 1_000_000;
    const positions = samplePositions(first, first + span - 1);
    assert.equal(positions.length, STATISTICS_SAMPLE);
    const stretch = span / STATISTICS_SAMPLE;
    positions.forEach((position, i) => {
      assert.ok(position >= first + i * stretch && position < first + (i + 1) * stretch, `position ${i}: ${position}`);
    });
  });

  it('answers the same for the same range', () => {
    assert.deepEqual(samplePositions(1, 123_456), samplePositions(1, 123_456));
  });

  it('does not fall into step with data that repeats with the stride', () => {
    // A stride of exactly 4 would see one residue only.
    const residues = new Set(samplePositions(0, STATISTICS_SAMPLE * 4 - 1).map((position) => position % 4));
    assert.deepEqual([...residues].sort(), [0, 1, 2, 3]);
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
