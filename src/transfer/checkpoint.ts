// The checkpoint of an import: which input it belongs to and how far the hub has acknowledged it, written atomically after every acknowledged chunk.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface Checkpoint {
  /** The input's fingerprint (size and hash of its start) and the space: a checkpoint of other input is not used. */
  input: string;
  space: string;
  /** Every item (feature or skipped record) before this index is acknowledged. */
  next: number;
  written: number;
  failed: number;
}

export function readCheckpoint(path: string): Checkpoint | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return JSON.parse(text) as Checkpoint;
}

export function writeCheckpoint(path: string, checkpoint: Checkpoint): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(checkpoint) + '\n');
  renameSync(temporary, path);
}
