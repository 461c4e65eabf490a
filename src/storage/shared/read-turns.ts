// Turns of the event loop shared by synchronous reads (SQLite): between two pages a read waits for a turn with time left.

/**
 * Milliseconds of synchronous pages one turn of the event loop runs before the reads still waiting are left for the
 * next turn. Node reads its sockets once per turn, in the poll phase, and takes at most one new connection there:
 * when every waiting read ran a page per turn, sixteen large reads made a turn last 300-400 ms, and the sixteenth
 * of a burst of new connections waited sixteen such turns for its first byte (docs/decisions.md, "Fair turns").
 * Below one page of 2,000 features, so a busy turn runs about one page.
 */
const TURN_BUDGET_MS = 5;

let spentThisTurn = 0;
let resetQueued = false;

/** Counts `ms` of synchronous work against the current turn. */
export function chargeTurn(ms: number): void {
  spentThisTurn += ms;
}

/**
 * Resolves in a later turn of the event loop that has time left. A read that finds the turn spent asks again in the
 * next one, after the sockets were polled; the turn's count starts again from a callback queued behind the reads
 * that came before, so those wait one more turn while the others go first: the reads take pages in rotation.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    const resume = () => {
      if (spentThisTurn < TURN_BUDGET_MS) {
        resolve();
        return;
      }
      if (!resetQueued) {
        resetQueued = true;
        setImmediate(() => {
          spentThisTurn = 0;
          resetQueued = false;
        });
      }
      setImmediate(resume);
    };
    setImmediate(resume);
  });
}
