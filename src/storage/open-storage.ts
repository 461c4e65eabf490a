// Opens the storage engine a HUB_STORAGE location names.
import { SqliteStorage } from './sqlite/sqlite-storage.js';
import type { Storage } from './storage.js';

export function openStorage(location: string): Storage {
  if (location.startsWith('sqlite:')) return new SqliteStorage(location.slice('sqlite:'.length));
  throw new Error(`Unsupported storage location "${location}": use sqlite:<file>`);
}
