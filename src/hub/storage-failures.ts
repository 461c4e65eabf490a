// Maps what storage reports in its own terms to the error catalogue.
import { hubError } from '../core/errors.js';
import { StorageError } from '../storage/storage-error.js';

/**
 * A space deleted between its lookup and a feature operation is gone for that request too; an unreachable
 * database is a 502 and a cancelled statement a 504 (API.md 1.7). Anything else passes through.
 */
export function fromStorage(error: unknown): unknown {
  if (!(error instanceof StorageError)) return error;
  switch (error.failure) {
    case 'spaceGone': return hubError('spaceOfFeaturesNotFound');
    case 'spaceExists': return hubError('spaceExists', { id: error.detail });
    case 'accountExists': return hubError('accountExists', { username: error.detail });
    case 'unavailable': return hubError('storageFailure');
    case 'timeout': return hubError('storageTimeout');
    case 'crossDatabase': return hubError('writeAcrossDatabases');
    // Only a job's writes are fenced, and the job stops quietly on it: no request is answered with it.
    case 'leaseLost': return hubError('storageFailure');
  }
}
