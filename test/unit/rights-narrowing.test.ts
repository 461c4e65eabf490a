// Unit tests for narrowRights: a token never holds more than its account (own spaces plus granted rights).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { intersectMaps, narrowRights } from '../../src/hub/access/rights-narrowing.js';
import { attributesMatch, type RightsMatrix } from '../../src/hub/access/claims.js';

const hub = (actions: RightsMatrix[string]): RightsMatrix => ({ 'xyz-hub': actions });

describe('intersectMaps', () => {
  it('joins maps with different keys (an absent key is a wildcard)', () => {
    assert.deepEqual(intersectMaps({ space: 'a' }, { owner: 'me' }), { space: 'a', owner: 'me' });
  });

  it('keeps equal values, and {} against anything gives that thing', () => {
    assert.deepEqual(intersectMaps({ owner: 'me' }, { owner: 'me' }), { owner: 'me' });
    assert.deepEqual(intersectMaps({}, { owner: 'me' }), { owner: 'me' });
    assert.deepEqual(intersectMaps({ packages: ['a', 'b'] }, { packages: ['a', 'b'] }), { packages: ['a', 'b'] });
  });

  it('keeps the more specific side of a prefix wildcard and a value it matches', () => {
    assert.deepEqual(intersectMaps({ space: 'proj-*' }, { space: 'proj-1' }), { space: 'proj-1' });
    assert.deepEqual(intersectMaps({ space: 'proj-1' }, { space: 'proj-*' }), { space: 'proj-1' });
    assert.deepEqual(intersectMaps({ space: 'p*' }, { space: 'proj-*' }), { space: 'proj-*' });
    assert.deepEqual(intersectMaps({ space: '*' }, { space: 'x' }), { space: 'x' });
  });

  it('drops a pair with differing values, a wildcard that does not match, or differing lists', () => {
    assert.equal(intersectMaps({ owner: 'other' }, { owner: 'me' }), undefined);
    assert.equal(intersectMaps({ space: 'proj-*' }, { space: 'test-1' }), undefined);
    assert.equal(intersectMaps({ owner: 'me*' }, { owner: 'other' }), undefined);
    assert.equal(intersectMaps({ packages: ['a'] }, { packages: ['a', 'b'] }), undefined);
    assert.equal(intersectMaps({ count: 1 }, { count: '1' }), undefined);
  });
});

describe('narrowRights', () => {
  it('narrows every requested map to the account\'s own spaces when nothing was granted', () => {
    const narrowed = narrowRights(hub({ readFeatures: [{}], manageSpaces: [{ space: 'x*' }] }), 'me', undefined);
    assert.deepEqual(narrowed, hub({ readFeatures: [{ owner: 'me' }], manageSpaces: [{ space: 'x*', owner: 'me' }] }));
  });

  it('drops maps for another owner, and actions and services left empty', () => {
    const narrowed = narrowRights({ 'xyz-hub': { readFeatures: [{ owner: 'other' }] }, other: { x: [{ owner: 'other' }] } }, 'me', undefined);
    assert.deepEqual(narrowed, {});
  });

  it('adds what was granted, intersected with the request', () => {
    const granted = hub({ readFeatures: [{ packages: 'OSM' }], useCapabilities: [{ id: 'hexbinClustering' }] });
    const requested = hub({ readFeatures: [{}], useCapabilities: [{}], deleteFeatures: [{ packages: 'OSM' }] });
    assert.deepEqual(narrowRights(requested, 'me', granted), hub({
      readFeatures: [{ owner: 'me' }, { packages: 'OSM' }],
      useCapabilities: [{ owner: 'me' }, { id: 'hexbinClustering' }],
      deleteFeatures: [{ packages: 'OSM', owner: 'me' }],
    }));
  });

  it('grants a space of another owner only as far as the grant reaches', () => {
    const granted = hub({ readFeatures: [{ owner: 'other', space: 'shared-*' }] });
    assert.deepEqual(narrowRights(hub({ readFeatures: [{ owner: 'other' }] }), 'me', granted),
      hub({ readFeatures: [{ owner: 'other', space: 'shared-*' }] }));
    assert.deepEqual(narrowRights(hub({ readFeatures: [{ owner: 'other', space: 'shared-1' }] }), 'me', granted),
      hub({ readFeatures: [{ owner: 'other', space: 'shared-1' }] }));
    assert.deepEqual(narrowRights(hub({ readFeatures: [{ space: 'private-1' }] }), 'me', granted),
      hub({ readFeatures: [{ space: 'private-1', owner: 'me' }] }));
  });

  it('lists a map once when several held maps give the same intersection', () => {
    const granted = hub({ readFeatures: [{ owner: 'me' }] });
    assert.deepEqual(narrowRights(hub({ readFeatures: [{}, { owner: 'me' }] }), 'me', granted), hub({ readFeatures: [{ owner: 'me' }] }));
  });

  it('a narrowed matrix grants a resource only when both the request and the account do', () => {
    const granted = hub({ readFeatures: [{ packages: 'OSM' }, { space: 'a*' }] });
    const requested = hub({ readFeatures: [{}, { space: 'ab' }, { owner: 'x', space: 'a*' }] });
    const narrowed = narrowRights(requested, 'me', granted);
    const allows = (urm: RightsMatrix, resource: Record<string, unknown>) => (urm['xyz-hub']?.readFeatures ?? []).some((map) => attributesMatch(map, resource));
    const accountHolds = (resource: Record<string, unknown>) => resource.owner === 'me' || allows(granted, resource);
    let granting = 0;
    for (const owner of ['me', 'x', 'y']) {
      for (const space of ['ab', 'ac', 'b', 'a']) {
        for (const packages of [[], ['OSM'], ['OTHER']]) {
          const resource = { owner, space, packages };
          const expected = allows(requested, resource) && accountHolds(resource);
          assert.equal(allows(narrowed, resource), expected, JSON.stringify(resource));
          if (expected) granting++;
        }
      }
    }
    assert.ok(granting > 5 && granting < 36, `the samples cover both outcomes (${granting} of 36 granted)`);
  });
});
