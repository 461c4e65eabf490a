// Unit tests for grantedOwners: which rights matrices the space list turns into a query condition (API.md 8.2).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type AttributeMap, type Claims, grantedOwners } from '../../src/hub/access/claims.js';

const LISTING = ['adminSpaces', 'manageSpaces', 'readFeatures'];

function claims(rights: Record<string, AttributeMap[]>): Claims {
  return { tid: 't', aid: 'me', cid: 'me', urm: { 'xyz-hub': rights } };
}

describe('grantedOwners', () => {
  it('is all when one map of a listed action is {}', () => {
    assert.equal(grantedOwners(claims({ readFeatures: [{ owner: 'a' }], adminSpaces: [{}] }), LISTING), 'all');
  });

  it('lists the owners when every map is a plain owner', () => {
    const owners = grantedOwners(claims({ readFeatures: [{ owner: 'a' }], manageSpaces: [{ owner: 'b' }] }), LISTING);
    assert.deepEqual(Array.isArray(owners) ? [...owners].sort() : owners, ['a', 'b']);
  });

  it('is an empty list without any map for the listed actions', () => {
    assert.deepEqual(grantedOwners(claims({ useCapabilities: [{}], accessConnectors: [{ id: 'x' }] }), LISTING), []);
    assert.deepEqual(grantedOwners({ tid: 't', aid: 'me', cid: 'me', urm: {} }, LISTING), []);
  });

  it('ignores actions that are not listed', () => {
    assert.deepEqual(grantedOwners(claims({ readFeatures: [{ owner: 'a' }], deleteFeatures: [{}] }), LISTING), ['a']);
  });

  for (const map of [{ owner: 'a*' }, { owner: ['a'] }, { owner: 1 }, { space: 's' }, { packages: 'OSM' }, { owner: 'a', space: 's' }]) {
    it(`is undefined (checked per space) for ${JSON.stringify(map)}`, () => {
      assert.equal(grantedOwners(claims({ readFeatures: [{ owner: 'a' }, map] }), LISTING), undefined);
    });
  }
});
