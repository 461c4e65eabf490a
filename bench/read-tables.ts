// The read sections' tables: each figure next to its plain floor and its own-SQL floor, with the CPU per request of each side, and their goals.
import { type Measured, perSecond, type Rate } from './measure.js';

export interface ReadRow {
  /** The bench section the figure belongs to; each section gets a table of its own. */
  section: string;
  figure: string;
  unit: string;
  hub: Measured;
  /** The obvious query on a plain table (plain-floor.ts), knowing nothing of the hub's SQL. */
  plain: Measured;
  /** The same reads through the hub's storage layer, its own SQL: a slow statement is slow on both sides of this ratio. */
  own: Rate;
  note?: string;
}

export interface Goal {
  /** What is compared, and which issue asked for it. */
  label: string;
  value: number;
  bound: number;
  /** Throughput ratios have a lower bound, CPU ratios an upper one. */
  at: 'least' | 'most';
}

const number = (value: number) => Math.round(value).toLocaleString('en-US');
const percent = (value: number) => `${(value * 100).toFixed(0)}%`;

/** Milliseconds of CPU per request, with two or three significant digits. */
function perRequest(seconds: number | undefined, requests: number): string {
  if (seconds === undefined) return 'in process';
  const ms = (seconds * 1000) / requests;
  return `${ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2)} ms`;
}

/** The database's CPU per request of a run, in seconds; undefined for an in-process engine. */
export const databaseCpuPerRequest = (run: Measured): number | undefined => (run.cpu.database === undefined ? undefined : run.cpu.database / run.requests);

export const throughputRatio = (row: ReadRow, floor: 'plain' | 'own'): number => perSecond(row.hub) / perSecond(row[floor]);

export class ReadTables {
  private readonly rows: ReadRow[] = [];
  private readonly goals: Goal[] = [];
  /** Headings of sections that are not reads, or whose request is not obvious. */
  private readonly headings = new Map<string, string>();

  add(row: ReadRow): void {
    this.rows.push(row);
  }

  /** The heading of `section`'s table instead of the reads' one. */
  heading(section: string, text: string): void {
    this.headings.set(section, text);
  }

  goal(goal: Goal): void {
    this.goals.push(goal);
  }

  /** Markdown tables, one per section, then the goals; empty when no read section ran. */
  print(write: (lines: string[][]) => void, heading: (text: string) => void): void {
    const sections = [...new Set(this.rows.map((row) => row.section))];
    for (const section of sections) {
      heading(this.headings.get(section)
        ?? `Reads: ${section} (CPU per request: the hub process and its database; the plain floor's own process and its database)`);
      const table = [['figure', 'hub', 'plain floor', 'hub/plain', 'own-SQL floor', 'hub/own-SQL', 'hub CPU/req', 'hub DB CPU/req',
        'floor CPU/req', 'floor DB CPU/req', 'note']];
      for (const row of this.rows.filter((candidate) => candidate.section === section)) {
        table.push([row.figure, `${number(perSecond(row.hub))} ${row.unit}`, `${number(perSecond(row.plain))} ${row.unit}`,
          percent(throughputRatio(row, 'plain')), `${number(perSecond(row.own))} ${row.unit}`, percent(throughputRatio(row, 'own')),
          perRequest(row.hub.cpu.process, row.hub.requests), perRequest(row.hub.cpu.database, row.hub.requests),
          perRequest(row.plain.cpu.process, row.plain.requests), perRequest(row.plain.cpu.database, row.plain.requests), row.note ?? '']);
      }
      write(table);
    }
    if (this.goals.length === 0) return;
    heading('Goals of the figures against their floors (benchmarks are not tests: a missed goal is reported, not failed)');
    const goals = [['goal', 'measured', 'bound', 'result']];
    for (const goal of this.goals) {
      const met = goal.at === 'least' ? goal.value >= goal.bound : goal.value <= goal.bound;
      const shown = goal.at === 'least' ? percent : (value: number) => `${value.toFixed(2)}×`;
      goals.push([goal.label, shown(goal.value), `${goal.at === 'least' ? '≥' : '≤'} ${shown(goal.bound)}`, met ? 'met' : 'MISSED']);
    }
    write(goals);
  }
}
