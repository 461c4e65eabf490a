// The sides of a figure measured in turns, each keeping its fastest run.
import { fastest, type Rate } from './measure.js';

export interface Side<T extends Rate> {
  run(turn: number): Promise<void>;
  best(): T;
}

export function side<T extends Rate>(measure: (turn: number) => Promise<T>): Side<T> {
  const runs: T[] = [];
  return {
    async run(turn) {
      runs.push(await measure(turn));
    },
    best: () => fastest(runs),
  };
}

/**
 * Runs every side once per turn, one after the other, so that background work on the two shared cores (autovacuum,
 * a checkpoint) slows all sides alike rather than one; each side's best turn counts.
 */
export async function takeTurns(turns: number, sides: Array<Side<Rate>>): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    for (const each of sides) await each.run(turn);
  }
}
