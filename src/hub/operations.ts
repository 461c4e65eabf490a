// What an operator reads of one process (docs/operations.md): whether its storage answers, and the figures GET /metrics exports.
import type { PoolFigures, Storage } from '../storage/storage.js';
import type { AccessService } from './access/access-service.js';
import type { ClaimsCacheFigures } from './access/claims-cache.js';
import type { AnswerCache, CacheFigures } from './features/answer-cache.js';

/**
 * How long readiness waits for the storage. Shorter than an orchestrator's usual probe timeout (Kubernetes: 1 s by
 * default, often raised to a few), so that a slow database answers 503 instead of a probe that timed out.
 */
export const READINESS_WAIT_MS = 2_000;

export interface ProcessFigures {
  pool: PoolFigures;
  answerCache: CacheFigures;
  tokenCache: ClaimsCacheFigures;
}

export class OperationsService {
  constructor(private readonly storage: Storage, private readonly cache: AnswerCache, private readonly access: AccessService) {}

  /** True when every database answered a trivial statement within READINESS_WAIT_MS. */
  async storageReachable(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), READINESS_WAIT_MS); });
    const answered = this.storage.ping().then(() => true, () => false);
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  figures(): ProcessFigures {
    return { pool: this.storage.poolFigures(), answerCache: this.cache.figures(), tokenCache: this.access.cacheFigures() };
  }
}
