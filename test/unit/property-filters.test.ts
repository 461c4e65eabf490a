// Unit tests for the p.* / f.* property-filter parser (API.md 5.5).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HubError } from '../../src/core/errors.js';
import { RawQuery } from '../../src/http/query/raw-query.js';
import { parsePropertyFilters } from '../../src/http/query/property-filters.js';
import type { PropertyCondition } from '../../src/core/feature-query.js';

const NS = '@ns:com:here:xyz';

function parse(rawQuery: string): PropertyCondition[] {
  return parsePropertyFilters(new RawQuery(rawQuery));
}

function one(rawQuery: string): PropertyCondition {
  const conditions = parse(rawQuery);
  assert.equal(conditions.length, 1);
  return conditions[0]!;
}

function rejects(rawQuery: string, pattern?: RegExp): void {
  assert.throws(() => parse(rawQuery), (error: unknown) =>
    error instanceof HubError && error.code === 'invalidPropertyFilter' && error.status === 400
    && (pattern === undefined || pattern.test(error.message)), rawQuery);
}

describe('operators', () => {
  const cases: Array<[string, PropertyCondition['op']]> = [
    ['p.a=1', 'eq'], ['p.a!=1', 'ne'],
    ['p.a>1', 'gt'], ['p.a>=1', 'gte'], ['p.a<1', 'lt'], ['p.a<=1', 'lte'],
    ['p.a=gt=1', 'gt'], ['p.a=gte=1', 'gte'], ['p.a=lt=1', 'lt'], ['p.a=lte=1', 'lte'],
    ['p.a@>1', 'contains'], ['p.a=cs=1', 'contains'],
  ];
  for (const [raw, op] of cases) {
    it(`${raw} → ${op}`, () => {
      assert.deepEqual(one(raw), { path: ['properties', 'a'], op, values: [1] });
    });
  }

  it('the earliest operator wins: p.a=x=y has the value x=y', () => {
    assert.deepEqual(one('p.a=x=y'), { path: ['properties', 'a'], op: 'eq', values: ['x=y'] });
  });

  it('a stray = after an ordering operator is ignored', () => {
    assert.deepEqual(one('p.capacity>50000='), { path: ['properties', 'capacity'], op: 'gt', values: [50000] });
    assert.deepEqual(one('p.capacity=lte=7='), { path: ['properties', 'capacity'], op: 'lte', values: [7] });
  });

  it('a trailing = stays part of an equality value', () => {
    assert.deepEqual(one('p.code=ab='), { path: ['properties', 'code'], op: 'eq', values: ['ab='] });
  });

  it('percent-encoded operator characters are recognized', () => {
    assert.equal(one('p.capacity%3E=50000').op, 'gte');
    assert.equal(one('p.capacity%3e50000=').op, 'gt');
    assert.equal(one('p.name%21=India').op, 'ne');
    assert.equal(one('p.a%3C%3D3').op, 'lte');
    assert.equal(one('p.tags%40%3Ex').op, 'contains');
    assert.deepEqual(one('p.a%3Dgte%3D3'), { path: ['properties', 'a'], op: 'gte', values: [3] });
  });

  it('a filter without operator is a 400', () => {
    rejects('p.name', /no operator/);
  });
});

describe('keys', () => {
  it('p.<path> descends into properties', () => {
    assert.deepEqual(one('p.a.b.c=1').path, ['properties', 'a', 'b', 'c']);
  });

  it('p.@ns:com:here:xyz.tags addresses the namespace', () => {
    assert.deepEqual(one('p.@ns:com:here:xyz.tags=cs=x').path, ['properties', NS, 'tags']);
    assert.deepEqual(one('p.%40ns%3Acom%3Ahere%3Axyz.tags=cs=x').path, ['properties', NS, 'tags']);
  });

  it('keys are form-decoded', () => {
    assert.deepEqual(one('p.my%20name=1').path, ['properties', 'my name']);
  });

  it('f.id compares strings', () => {
    assert.deepEqual(one('f.id=lte=AGO'), { path: ['id'], op: 'lte', values: ['AGO'] });
    assert.deepEqual(one('f.id=123,true,1.5'), { path: ['id'], op: 'eq', values: ['123', 'true', '1.5'] });
    assert.deepEqual(one("f.id='Q1370732'"), { path: ['id'], op: 'eq', values: ['Q1370732'] });
  });

  it('f.createdAt and f.updatedAt address the namespace timestamps', () => {
    assert.deepEqual(one('f.createdAt<=1700000000000'),
      { path: ['properties', NS, 'createdAt'], op: 'lte', values: [1700000000000] });
    assert.deepEqual(one('f.updatedAt>1').path, ['properties', NS, 'updatedAt']);
  });

  it('f.tags addresses the namespace tags with normalized string values', () => {
    assert.deepEqual(one('f.tags=cs=Caf%C3%A9,~MyTag,42'),
      { path: ['properties', NS, 'tags'], op: 'contains', values: ['cafe', '~MyTag', '42'] });
  });

  it('f.geometry.type canonicalizes case-insensitively', () => {
    assert.deepEqual(one('f.geometry.type=point,MULTIPOLYGON,lineString'),
      { path: ['geometry', 'type'], op: 'eq', values: ['Point', 'MultiPolygon', 'LineString'] });
  });

  it('f.geometry.type=.null finds features without geometry', () => {
    assert.deepEqual(one('f.geometry.type=.null'), { path: ['geometry', 'type'], op: 'eq', values: [null] });
  });

  it('f.geometry.type with an unknown type is a 400', () => {
    rejects('f.geometry.type=Circle', /Circle/);
    rejects('f.geometry.type=GeometryCollection');
    rejects('f.geometry.type=1');
  });

  it('other f.<path> keys address root members', () => {
    assert.deepEqual(one('f.type=Feature').path, ['type']);
    assert.deepEqual(one('f.geometry.coordinates=cs=1').path, ['geometry', 'coordinates']);
  });

  it('empty paths are a 400', () => {
    rejects('p.=1', /path/);
    rejects('f.=1', /path/);
    rejects('p.a..b=1', /path/);
    rejects('p.a.=1', /path/);
  });

  it('non-filter parameters are ignored', () => {
    assert.deepEqual(parse('name!=India&clientId=dhpy&limit=5'), []);
  });
});

describe('values', () => {
  it('types booleans, integers, decimals, quoted strings, .null and plain strings', () => {
    assert.deepEqual(one("p.v=true,false,01234,-5,%2B2,1.5,-0.25,.5,1e3,\"x\",'museum',.null,hello,,'',True").values,
      [true, false, 1234, -5, 2, 1.5, -0.25, 0.5, 1000, 'x', 'museum', null, 'hello', '', "''", 'True']);
  });

  it('quotes force a string, even for numbers', () => {
    assert.deepEqual(one("p.v='123',\"true\"").values, ['123', 'true']);
  });

  it('a mismatched or lone quote pair is not stripped', () => {
    assert.deepEqual(one("p.v='x\",\"\"").values, ["'x\"", '""']);
  });

  it('typing applies after percent-decoding: %27museum%27', () => {
    assert.deepEqual(one('p.name=%27museum%27').values, ['museum']);
    assert.deepEqual(one('p.n=%31%32').values, [12]);
  });

  it('infinite decimals stay strings', () => {
    assert.deepEqual(one('p.v=1e999').values, ['1e999']);
  });

  it('p.name= equals the empty string', () => {
    assert.deepEqual(one('p.name='), { path: ['properties', 'name'], op: 'eq', values: [''] });
  });

  it('%2C is a literal comma; unencoded commas separate OR-ed values', () => {
    assert.deepEqual(one('p.sport=association%2C%20football').values, ['association, football']);
    assert.deepEqual(one('p.sport=association%20football,American+football').values,
      ['association football', 'American football']);
  });

  it('repeated keys give separate (AND-ed) conditions', () => {
    assert.deepEqual(parse('p.a>1&p.a<5'), [
      { path: ['properties', 'a'], op: 'gt', values: [1] },
      { path: ['properties', 'a'], op: 'lt', values: [5] },
    ]);
  });

  it('.null is allowed with = and !=', () => {
    assert.deepEqual(one('p.a!=.null').values, [null]);
    assert.deepEqual(one('p.a=.null').values, [null]);
  });

  it('.null with other operators is a 400', () => {
    rejects('p.a>.null', /\.null/);
    rejects('p.a=gte=1,.null', /\.null/);
    rejects('p.a=cs=.null', /\.null/);
  });

  it('malformed percent-encoding is a 400', () => {
    rejects('p.a=%E0', /percent/);
    rejects('p.%zz=1', /percent/);
  });
});

describe('containment values', () => {
  it('parses JSON objects and arrays: =cs={"k":1}', () => {
    assert.deepEqual(one('p.items=cs={"k":1}'), { path: ['properties', 'items'], op: 'contains', values: [{ k: 1 }] });
    assert.deepEqual(one('p.items@>%5B1%2C2%5D').values, [[1, 2]]);
    assert.deepEqual(one('p.items=cs=%7B%22a%22%3A%22x%2Cy%22%7D').values, [{ a: 'x,y' }]);
  });

  it('scalar containment values are typed as usual', () => {
    assert.deepEqual(one('p.tags=cs=a,7').values, ['a', 7]);
  });

  it('invalid JSON is a 400', () => {
    rejects('p.items=cs={"k":', /JSON/);
    rejects('p.items=cs={"k":1,"j":2}', /JSON/);
  });

  it('JSON-looking values of other operators stay strings', () => {
    assert.deepEqual(one('p.a={"k":1}').values, ['{"k":1}']);
  });
});
