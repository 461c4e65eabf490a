// Test fixtures of accounts and tokens, stored through the hub's own storage: the callers a rights test needs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Claims, RightsMatrix } from '../../src/hub/access/claims.js';
import { hashToken } from '../../src/hub/access/secrets.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { HubProcess } from './hub-process.js';

export interface IssuedToken {
  token: string;
  tid: string;
  aid: string;
}

export interface TokenFixture {
  /** The account the token belongs to; its id is the token's `aid`. */
  aid: string;
  urm: RightsMatrix;
  cid?: string;
  limits?: Claims['limits'];
  /** Unix seconds. */
  exp?: number;
}

/** Every action a hub token may name, granted on the spaces `owner` owns. */
export function ownerRights(owner: string): RightsMatrix {
  const actions = ['readFeatures', 'createFeatures', 'updateFeatures', 'deleteFeatures', 'manageSpaces', 'adminSpaces', 'accessConnectors', 'managePackages', 'useCapabilities'];
  return { 'xyz-hub': Object.fromEntries(actions.map((action) => [action, [action === 'useCapabilities' ? {} : { owner }]])) };
}

/**
 * Stores a token for `fixture.aid` next to the running hub, as if it had been issued; the bearer string is returned
 * once, as the Token API does. The account row is created when missing.
 */
export async function issueToken(hub: HubProcess, fixture: TokenFixture): Promise<IssuedToken> {
  const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
  try {
    const token = randomBytes(24).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x');
    const tid = randomBytes(8).toString('hex');
    if (!(await storage.access.findAccountByUsername(fixture.aid))) {
      await storage.access.createAccount({ id: fixture.aid, username: fixture.aid, passwordHash: 'unusable', admin: false, createdAt: Date.now() });
    }
    const claims: Record<string, unknown> = { cid: fixture.cid ?? fixture.aid, urm: fixture.urm, iat: Math.floor(Date.now() / 1000) };
    if (fixture.limits) claims.limits = fixture.limits;
    if (fixture.exp !== undefined) claims.exp = fixture.exp;
    await storage.access.createToken({ tid, aid: fixture.aid, secretHash: hashToken(token), claims });
    return { token, tid, aid: fixture.aid };
  } finally {
    await storage.close();
  }
}

/** Deletes a token next to the running hub, as a deletion on another node would. */
export async function deleteStoredToken(hub: HubProcess, tid: string): Promise<void> {
  const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
  try {
    assert.ok(await storage.access.deleteToken(tid), `token ${tid} was stored`);
  } finally {
    await storage.close();
  }
}
