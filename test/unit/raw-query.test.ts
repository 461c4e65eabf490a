// Unit tests for RawQuery: segments, the comma rule, form decoding, booleans, limit and the tags filter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HubError } from '../../src/core/errors.js';
import { RawQuery, formDecode, percentDecode } from '../../src/http/query/raw-query.js';

function isHubError(code: string): (error: unknown) => boolean {
  return (error) => error instanceof HubError && error.code === code && error.status === 400;
}

describe('RawQuery segments', () => {
  it('fromUrl takes the part after ?', () => {
    const query = RawQuery.fromUrl('/hub/spaces/x/search?limit=5&clientId=dhpy');
    assert.equal(query.first('limit'), '5');
    assert.equal(query.first('clientId'), 'dhpy');
  });

  it('fromUrl without ? has no parameters', () => {
    const query = RawQuery.fromUrl('/hub/spaces/x/search');
    assert.equal(query.first('limit'), undefined);
    assert.deepEqual(query.tags(), []);
  });

  it('ignores empty segments and leading/trailing &', () => {
    const query = new RawQuery('&tags=x&&clientId=cli&');
    assert.deepEqual(query.tags(), [['x']]);
    assert.equal(query.first('clientId'), 'cli');
  });

  it('matches names case-insensitively', () => {
    const query = new RawQuery('LIMIT=7&force2d=true');
    assert.equal(query.first('limit'), '7');
    assert.equal(query.boolean('force2D', false), true);
  });

  it('splits name and value at the first =', () => {
    assert.equal(new RawQuery('a=b=c').first('a'), 'b=c');
  });

  it('a segment without = has the value ""', () => {
    const query = new RawQuery('flag');
    assert.equal(query.first('flag'), '');
    assert.deepEqual(query.values('flag'), ['']);
  });

  it('absent names have no value', () => {
    assert.equal(new RawQuery('a=1').first('b'), undefined);
    assert.deepEqual(new RawQuery('a=1').values('b'), []);
  });
});

describe('RawQuery.values and first', () => {
  it('combines repeats and unencoded commas: ?id=a,b&id=c', () => {
    assert.deepEqual(new RawQuery('id=a,b&id=c').values('id'), ['a', 'b', 'c']);
  });

  it('%2C is a literal comma inside one value', () => {
    assert.deepEqual(new RawQuery('id=a%2Cb,c').values('id'), ['a,b', 'c']);
  });

  it('form-decodes: + is a space, %2B is a plus', () => {
    assert.deepEqual(new RawQuery('id=a+b,c%2Bd').values('id'), ['a b', 'c+d']);
  });

  it('an empty value gives [""]', () => {
    assert.deepEqual(new RawQuery('x=').values('x'), ['']);
  });

  it('first() returns the first whole value without splitting', () => {
    assert.equal(new RawQuery('x=a,b%2Cc&x=d').first('x'), 'a,b,c');
  });

  it('malformed percent-encoding is a 400 invalidParameter', () => {
    assert.throws(() => new RawQuery('id=%E0%A4%A').values('id'), isHubError('invalidParameter'));
    assert.throws(() => new RawQuery('id=%zz').first('id'), isHubError('invalidParameter'));
  });
});

describe('RawQuery.boolean', () => {
  it('accepts only exact true/false', () => {
    assert.equal(new RawQuery('b=true').boolean('b', false), true);
    assert.equal(new RawQuery('b=false').boolean('b', true), false);
    assert.equal(new RawQuery('b=TRUE').boolean('b', false), false);
    assert.equal(new RawQuery('b=1').boolean('b', true), true);
    assert.equal(new RawQuery('b=').boolean('b', true), true);
    assert.equal(new RawQuery('').boolean('b', false), false);
  });
});

describe('RawQuery.limit', () => {
  it('defaults to 30000 or the given default', () => {
    assert.equal(new RawQuery('').limit(), 30000);
    assert.equal(new RawQuery('').limit(100000), 100000);
  });

  it('accepts 1..100000', () => {
    assert.equal(new RawQuery('limit=1').limit(), 1);
    assert.equal(new RawQuery('limit=100000').limit(), 100000);
  });

  it('rejects out of range and non-integers with the fixed message', () => {
    for (const value of ['0', '100001', '-5', 'ten', '2.5', '']) {
      assert.throws(() => new RawQuery(`limit=${value}`).limit(), (error: unknown) =>
        error instanceof HubError && error.code === 'limitOutOfRange'
        && error.message === 'The parameter limit must be between 1 and 100000.', value);
    }
  });
});

describe('RawQuery.tags', () => {
  it('absent or empty means no filter', () => {
    assert.deepEqual(new RawQuery('').tags(), []);
    assert.deepEqual(new RawQuery('tags=').tags(), []);
  });

  it('raw + is AND: tags=football+stadium', () => {
    assert.deepEqual(new RawQuery('tags=football+stadium').tags(), [['football', 'stadium']]);
  });

  it('unencoded comma is OR: tags=football,stadium', () => {
    assert.deepEqual(new RawQuery('tags=football,stadium').tags(), [['football'], ['stadium']]);
  });

  it('repeated parameters are OR-ed', () => {
    assert.deepEqual(new RawQuery('tags=a&TAGS=b+c').tags(), [['a'], ['b', 'c']]);
  });

  it('%2C and %2B stay inside the tag', () => {
    assert.deepEqual(new RawQuery('tags=a%2Cb,c%2Bd').tags(), [['a,b'], ['c+d']]);
  });

  it('percent-decodes and normalizes members', () => {
    assert.deepEqual(new RawQuery('tags=Caf%C3%A9+~MyTag,%40Private').tags(), [['cafe', '~MyTag'], ['@Private']]);
  });

  it('drops empty members and groups', () => {
    assert.deepEqual(new RawQuery('tags=a++b,,+').tags(), [['a', 'b']]);
  });

  it('malformed percent-encoding is a 400', () => {
    assert.throws(() => new RawQuery('tags=%E0').tags(), isHubError('invalidParameter'));
  });
});

describe('RawQuery.isDeleteAll', () => {
  it('is true only for a tags value of exactly *', () => {
    assert.equal(new RawQuery('tags=*').isDeleteAll(), true);
    assert.equal(new RawQuery('tags=a&tags=*').isDeleteAll(), true);
    assert.equal(new RawQuery('tags=a,b').isDeleteAll(), false);
    assert.equal(new RawQuery('tags=*a').isDeleteAll(), false);
    assert.equal(new RawQuery('id=*').isDeleteAll(), false);
  });
});

describe('RawQuery.propertyFilterSegments', () => {
  it('returns raw p./f. segments in order, case-sensitively', () => {
    const query = new RawQuery('clientId=dhpy&p.name=x%20y&limit=3&f.id=a,b&P.upper=1&name!=India&p.capacity>5');
    assert.deepEqual(query.propertyFilterSegments(), ['p.name=x%20y', 'f.id=a,b', 'p.capacity>5']);
  });
});

describe('decoders', () => {
  it('formDecode turns + into a space; percentDecode keeps it', () => {
    assert.equal(formDecode('a+b%2B'), 'a b+');
    assert.equal(percentDecode('a+b%2B'), 'a+b+');
  });

  it('return undefined for malformed input', () => {
    assert.equal(formDecode('%'), undefined);
    assert.equal(percentDecode('%C3'), undefined);
  });
});

describe('RawQuery declared parameters', () => {
  it('reads what the route declares, families by prefix, and refuses to read anything else', () => {
    const query = RawQuery.fromUrl('/x?limit=5&p.name=a&clustering.resolution=3&other=1', new Set(['limit', 'p.*', 'clustering.*']));
    assert.equal(query.first('limit'), '5');
    assert.equal(query.first('LIMIT'), '5', 'names compare without case, as reads do');
    assert.deepEqual(query.propertyFilterSegments(), ['p.name=a']);
    assert.deepEqual(query.rawSegmentsStartingWith('clustering.', true), ['clustering.resolution=3']);
    assert.throws(() => query.first('other'), /without declaring it in the route table/);
    assert.throws(() => query.tags(), /"tags"/);
    assert.throws(() => query.rawSegmentsStartingWith(''), /without declaring/);
  });

  it('reads anything with * declared, and everything without a declaration', () => {
    assert.equal(RawQuery.fromUrl('/x?name=k3', new Set(['*'])).first('name'), 'k3');
    assert.equal(RawQuery.fromUrl('/x?name=k3').first('name'), 'k3');
  });
});
