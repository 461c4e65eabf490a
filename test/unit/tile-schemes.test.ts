// Unit tests for tile ids, tile bounds and margins of the four tile schemes (API.md 6.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTileId } from '../../src/core/tile-ids.js';
import { enlargedBounds, MERCATOR_MAX_LATITUDE, quadkeyOf, tileBounds, tileIdOf, type Tile } from '../../src/geo/tile-schemes.js';
import { HubError } from '../../src/core/errors.js';

function assertBounds(actual: readonly number[], expected: readonly number[], decimals: number): void {
  const tolerance = 0.5 * 10 ** -decimals;
  actual.forEach((value, index) => {
    assert.ok(Math.abs(value - expected[index]) <= tolerance, `${JSON.stringify(actual)} should be ${JSON.stringify(expected)}`);
  });
}

function assertRefused(type: string, tileId: string, code: string, encoding: 'base4' | 'decimal' = 'base4'): void {
  assert.throws(() => parseTileId(type, tileId, encoding), (error: unknown) => {
    assert.ok(error instanceof HubError);
    assert.equal(error.code, code, `${type}/${tileId}: ${error.message}`);
    assert.equal(error.status, 400);
    if (code === 'invalidTileId') assert.ok(error.message.startsWith('Invalid argument tileId.'), error.message);
    return true;
  });
}

test('quadkey: the API.md example decodes to level 16, x 18736, y 34979', () => {
  assert.deepEqual(parseTileId('quadkey', '2100300120310022', 'base4'),
    { scheme: 'quadkey', level: 16, x: 18736, y: 34979, format: 'geojson' });
  assert.equal(quadkeyOf(16, 18736, 34979), '2100300120310022');
});

test('quadkey: digit is xbit + 2*ybit; bounds are those of the web tile', () => {
  assert.deepEqual(parseTileId('quadkey', '1', 'base4'), { scheme: 'quadkey', level: 1, x: 1, y: 0, format: 'geojson' });
  assert.deepEqual(parseTileId('quadkey', '2', 'base4'), { scheme: 'quadkey', level: 1, x: 0, y: 1, format: 'geojson' });
  const web = parseTileId('web', '5_17_10', 'base4');
  const quadkey = parseTileId('quadkey', quadkeyOf(5, 17, 10), 'base4');
  assert.deepEqual(tileBounds(quadkey), tileBounds(web));
  assert.equal(parseTileId('quadkey', '3'.repeat(31), 'base4').x, 2 ** 31 - 1);
});

test('web: 5_17_10 has the bounds of API.md', () => {
  const tile = parseTileId('web', '5_17_10', 'base4');
  assert.deepEqual(tile, { scheme: 'web', level: 5, x: 17, y: 10, format: 'geojson' });
  assertBounds(tileBounds(tile), [11.25, 48.9225, 22.5, 55.7766], 4);
});

test('web: level 0 is the whole Mercator world', () => {
  assertBounds(tileBounds(parseTileId('web', '0_0_0', 'base4')), [-180, -MERCATOR_MAX_LATITUDE, 180, MERCATOR_MAX_LATITUDE], 9);
});

test('tms: y is flipped the standard way, tms/5_17_21 is web/5_17_10', () => {
  const tms = parseTileId('tms', '5_17_21', 'base4');
  assert.deepEqual(tms, { scheme: 'tms', level: 5, x: 17, y: 10, format: 'geojson' });
  assert.deepEqual(tileBounds(tms), tileBounds(parseTileId('web', '5_17_10', 'base4')));
  assert.equal(parseTileId('tms', '3_0_0', 'base4').y, 7);
});

test('format suffix after the first dot', () => {
  const formatOf = (tileId: string) => parseTileId('web', tileId, 'base4').format;
  assert.equal(formatOf('5_17_10.mvt'), 'mvt');
  assert.equal(formatOf('5_17_10.mvt2'), 'mvt');
  assert.equal(formatOf('5_17_10.mvtf'), 'mvtf');
  assert.equal(formatOf('5_17_10.mvtf2'), 'mvtf');
  assert.equal(formatOf('5_17_10.geojson'), 'geojson');
  assert.equal(formatOf('5_17_10.json'), 'geojson');
  assert.equal(formatOf('5_17_10.mvt.gz'), 'geojson');
  assert.equal(parseTileId('quadkey', '120.mvt', 'base4').format, 'mvt');
  assert.equal(parseTileId('here', '12.mvtf', 'base4').format, 'mvtf');
});

test('here base-4 (default): here/12 is level 2, x 2, y 1, bbox [0, 0, 90, 90]', () => {
  const tile = parseTileId('here', '12', 'base4');
  assert.deepEqual(tile, { scheme: 'here', level: 2, x: 2, y: 1, format: 'geojson' });
  assert.deepEqual(tileBounds(tile), [0, 0, 90, 90]);
});

test('here decimal: here/377894440 is level 14, x 8800, y 6486', () => {
  const tile = parseTileId('here', '377894440', 'decimal');
  assert.deepEqual(tile, { scheme: 'here', level: 14, x: 8800, y: 6486, format: 'geojson' });
  assert.deepEqual(tileBounds(tile), [13.359375, 52.5146484375, 13.38134765625, 52.53662109375]);
  // The same tile in base 4 is the quadkey, and L_x_y works in both encodings.
  assert.deepEqual(parseTileId('here', '12201203120220', 'base4'), tile);
  assert.deepEqual(parseTileId('here', '14_8800_6486', 'decimal'), tile);
  assert.deepEqual(parseTileId('here', '14_8800_6486', 'base4'), tile);
});

test('here level 1: two tiles, one row covering -90..90', () => {
  assert.deepEqual(tileBounds(parseTileId('here', '0', 'base4')), [-180, -90, 0, 90]);
  assert.deepEqual(tileBounds(parseTileId('here', '1', 'base4')), [0, -90, 180, 90]);
  assert.deepEqual(tileBounds(parseTileId('here', '1_1_0', 'base4')), [0, -90, 180, 90]);
  // Decimal 5 = base 4 "11": marker, then quadkey "1".
  assert.deepEqual(parseTileId('here', '5', 'decimal'), { scheme: 'here', level: 1, x: 1, y: 0, format: 'geojson' });
});

test('here level 31: the decimal form needs more than 53 bits', () => {
  const quadkey = '1' + '0'.repeat(30);
  const decimal = ((1n << 62n) | (1n << 60n)).toString();
  assert.deepEqual(parseTileId('here', decimal, 'decimal'), parseTileId('here', quadkey, 'base4'));
  assert.equal(parseTileId('here', quadkey, 'base4').x, 2 ** 30);
});

test('margin enlarges web tiles by margin/256 tile widths', () => {
  const tile = parseTileId('web', '2_1_1', 'base4');
  const plain = tileBounds(tile);
  // One tile width on each side: tile space x 0..3, y 0..3 at level 2 (y = 3 is -66.5133°).
  const grown = enlargedBounds(tile, 256);
  assertBounds(grown, [-180, -66.5133, 90, MERCATOR_MAX_LATITUDE], 4);
  assert.ok(grown[1] < plain[1] && grown[3] > plain[3]);
  assert.deepEqual(enlargedBounds(tile, 0), plain);
});

test('margin is clamped at the world edge without wrapping', () => {
  const corner = parseTileId('quadkey', '0', 'base4');
  const grown = enlargedBounds(corner, 20);
  assert.equal(grown[0], -180);
  assertBounds([grown[3]], [MERCATOR_MAX_LATITUDE], 9);
  const width = 180 * (1 + 20 / 256);
  assertBounds([grown[2]], [-180 + width], 9);
  assert.ok(grown[1] < 0);
  const whole = enlargedBounds(parseTileId('web', '0_0_0', 'base4'), 1000);
  assertBounds(whole, [-180, -MERCATOR_MAX_LATITUDE, 180, MERCATOR_MAX_LATITUDE], 9);
});

test('margin is ignored for here tiles', () => {
  const tile: Tile = parseTileId('here', '12', 'base4');
  assert.deepEqual(enlargedBounds(tile, 64), [0, 0, 90, 90]);
});

test('unknown tile types are refused', () => {
  for (const type of ['', 'WEB', 'xyz', 'quadKey', 'mercator']) assertRefused(type, '1', 'invalidTileType');
});

test('invalid quadkeys are refused', () => {
  for (const id of ['', '4', '12a', '-1', '1 2', '0'.repeat(32), '.mvt', '12_3']) assertRefused('quadkey', id, 'invalidTileId');
});

test('invalid web and tms ids are refused', () => {
  for (const type of ['web', 'tms']) {
    for (const id of ['5_32_0', '5_0_32', '0_1_0', '5_17', '5_17_10_1', '5/17/10', '-1_0_0', '5_-1_0', '5_1.5_0',
      '32_0_0', 'a_b_c', '', '5__10', '5_17_10x', '99999999999_0_0', '+5_1_1']) {
      assertRefused(type, id, 'invalidTileId');
    }
  }
});

test('invalid here ids are refused in both encodings', () => {
  // Base 4: not a quadkey, or y out of range (the top y bit must be 0: digit 2 or 3 first).
  for (const id of ['', '4', '2', '3', '21', '1a', '0'.repeat(32), '-1']) assertRefused('here', id, 'invalidTileId');
  // Decimal: not a number, no level marker (0, 1, 2, 3 in base 4 are 0, 1, 2, 3), y out of range.
  for (const id of ['0', '1', '2', '3', '12a', '-5', '0x10', String(0b1011), '1'.repeat(21)]) {
    assertRefused('here', id, 'invalidTileId', 'decimal');
  }
  // Decimal 13 = base 4 "31": bad marker; decimal 6 = "12": marker then digit 2 (y = 1 at level 1).
  assertRefused('here', '13', 'invalidTileId', 'decimal');
  assertRefused('here', '6', 'invalidTileId', 'decimal');
  // L_x_y: level 0 or above 31, x or y out of range.
  for (const id of ['0_0_0', '32_0_0', '1_2_0', '1_0_1', '2_4_0', '2_0_2', '14_8800_8192']) {
    assertRefused('here', id, 'invalidTileId');
    assertRefused('here', id, 'invalidTileId', 'decimal');
  }
});

test('tileIdOf names each tile as parseTileId reads it back, in every scheme and both here encodings', () => {
  for (const encoding of ['base4', 'decimal'] as const) {
    for (const scheme of ['web', 'tms', 'quadkey', 'here'] as const) {
      for (const [level, x, y] of [[1, 1, 0], [5, 17, 9], [12, 2170, 1023], [31, 2 ** 31 - 1, 2 ** 30 - 1]]) {
        const id = tileIdOf(scheme, level, x, y, encoding);
        const tile = parseTileId(scheme, id, encoding);
        assert.deepEqual([tile.level, tile.x, tile.y], [level, x, y], `${scheme} ${encoding} ${id}`);
      }
    }
  }
  assert.equal(tileIdOf('here', 2, 3, 1, 'decimal'), String(parseInt('1' + quadkeyOf(2, 3, 1), 4)));
});
