// Tells this node about tokens deleted on any node: a dedicated connection LISTENs to the channel deletions NOTIFY.
import type { RevocationWatch } from '../storage.js';
import { listenToChannel } from './channel-listener.js';

/** The channel a token deletion notifies in its own transaction, so listeners hear of it when it commits. */
export const REVOCATION_CHANNEL = 'hub_token_revoked';

/**
 * While the connection listens, every committed deletion reaches `onRevoked` with the token's secret hash.
 * A lost connection may have missed some: `onRevoked()` without a hash then says "forget every token", and
 * `live()` is false until listening again, so the caller caches nothing meanwhile.
 */
export function listenForRevocations(url: string, onRevoked: (secretHash?: string) => void): RevocationWatch {
  return listenToChannel(url, REVOCATION_CHANNEL, 'revocations', { message: onRevoked, gap: () => onRevoked() });
}
