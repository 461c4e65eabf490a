// A worker's side of what the node's processes share: rates, token deletions and committed versions go through the primary over IPC.
import type { NodePeers } from '../hub/access/node-peers.js';
import type { ChangePeers } from '../hub/changes/change-peers.js';
import type { SpaceKey } from '../storage/storage.js';
import type { PrimaryMessage, WorkerMessage } from './messages.js';

type Question = { type: 'rate'; tid: string; perMinute: number } | { type: 'revoked'; secretHash: string } | { type: 'metrics' };

export class WorkerPeers implements NodePeers, ChangePeers {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: PrimaryMessage) => void>();
  private readonly listeners: Array<(secretHash: string) => void> = [];
  private readonly changeListeners: Array<(space: SpaceKey, version: number) => void> = [];

  constructor() {
    // Both ends of the channel are this program; Node's own cluster messages do not reach 'message' listeners.
    process.on('message', (message) => this.receive(message as PrimaryMessage));
  }

  async takeRequest(tid: string, perMinute: number): Promise<number | undefined> {
    const answer = await this.ask({ type: 'rate', tid, perMinute });
    return answer.type === 'rate' && answer.wait !== null ? answer.wait : undefined;
  }

  async announceRevocation(secretHash: string): Promise<void> {
    await this.ask({ type: 'revoked', secretHash });
  }

  /** The node's metrics (GET /metrics), summed over its workers by the primary. */
  async nodeMetrics(): Promise<string> {
    const answer = await this.ask({ type: 'metrics' });
    if (answer.type !== 'metrics' || answer.text === null) throw new Error('the node\'s workers did not all report their metrics in time');
    return answer.text;
  }

  onRevocation(listener: (secretHash: string) => void): void {
    this.listeners.push(listener);
  }

  announceChange(space: SpaceKey, version: number): void {
    tellPrimary({ type: 'changed', location: space.location, sid: space.sid, version });
  }

  onChange(listener: (space: SpaceKey, version: number) => void): void {
    this.changeListeners.push(listener);
  }

  private ask(question: Question): Promise<PrimaryMessage> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      tellPrimary({ ...question, id });
    });
  }

  private receive(message: PrimaryMessage): void {
    if (message.type === 'changed') {
      for (const listener of this.changeListeners) listener({ location: message.location, sid: message.sid }, message.version);
      return;
    }
    if (message.type === 'forget') {
      for (const listener of this.listeners) listener(message.secretHash);
      tellPrimary({ type: 'forgot', id: message.id });
      return;
    }
    // Other messages on the channel (prom-client's own, answered by its listener) carry no id of ours.
    if (typeof message.id !== 'number') return;
    const answered = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    answered?.(message);
  }
}

/** A worker without its primary has nothing left to do: Node's cluster ends it when the channel closes. */
export function tellPrimary(message: WorkerMessage): void {
  process.send?.(message, undefined, undefined, () => undefined);
}
