// Benchmark section `processors`: one 10,000-feature PUT into a space with a schema and tagging rules, against the same PUT into a plain space.
import { cityFeature, loadCities } from './data.js';
import { readCpuSeconds } from './process-cpu.js';
import { createSpace, type HubClient } from './http.js';
import { median, perSecond, type Rate, timed } from './measure.js';

/** The write: 10,000 features in one request. */
const FEATURES = 10_000;
/** Untimed PUTs per side before the timed turns. */
const WARM_UPS = 2;

/** What a city must look like: required members with types, a pattern, an enum and bounds. */
const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['type', 'geometry', 'properties'],
  properties: {
    type: { const: 'Feature' },
    geometry: {
      type: 'object',
      required: ['type', 'coordinates'],
      properties: {
        type: { const: 'Point' },
        coordinates: { type: 'array', minItems: 2, maxItems: 3, items: [{ type: 'number', minimum: -180, maximum: 180 }, { type: 'number', minimum: -90, maximum: 90 }] },
      },
    },
    properties: {
      type: 'object',
      required: ['name', 'country', 'population', 'featureCode'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
        population: { type: 'integer', minimum: 0 },
        featureCode: { enum: ['PPL', 'PPLA', 'PPLA2', 'PPLA3', 'PPLA4', 'PPLA5', 'PPLC', 'PPLCH', 'PPLF', 'PPLG', 'PPLH', 'PPLL', 'PPLQ', 'PPLR', 'PPLS', 'PPLW', 'PPLX', 'STLMT'] },
        adminCode: { type: 'string' },
      },
    },
  },
};

/** Three rules with filters, on a property value, a property threshold and a coordinate. */
const TAGGING_RULES = {
  capital: "$.features[?(@.properties.featureCode === 'PPLC')]",
  large: '$.features[?(@.properties.population >= 100000)]',
  north: '$.features[?(@.geometry.coordinates[1] >= 60)]',
};

export const PROCESSORS = [
  { id: 'schema-validator', params: { schema: SCHEMA } },
  { id: 'rule-tagger', params: { taggingRules: TAGGING_RULES } },
];

export interface ProcessorsBench {
  client: HubClient;
  /** The hub's process, whose CPU time each PUT is read for: it varies less than wall time on a shared machine. */
  hubPid: number;
  /** Timed PUTs per side, taking turns. */
  turns: number;
  goal: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

interface Put {
  rate: Rate;
  /** The hub's CPU seconds during the PUT. */
  cpu: number;
  space: string;
}

/** The PUT into a new space, timed from request to answer; the caller checks and deletes the space. */
async function putInto(bench: ProcessorsBench, processors: boolean, body: Buffer): Promise<Put> {
  const { client } = bench;
  const space = await createSpace(client, { title: `bench processors ${processors ? 'on' : 'off'}`, ...(processors ? { processors: PROCESSORS } : {}) });
  // A pause first, so that each PUT starts on a hub that has finished with the last one (its garbage, a checkpoint).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cpuBefore = readCpuSeconds(bench.hubPid);
  const rate = await timed(async () => {
    await client.expect(204, 'PUT', `/hub/spaces/${space}/features`, body, { accept: 'application/x-empty' });
    return FEATURES;
  });
  const cpu = readCpuSeconds(bench.hubPid) - cpuBefore;
  const counted = JSON.parse((await client.expect(200, 'GET', `/hub/spaces/${space}/count`)).toString()) as { count: number };
  if (counted.count !== FEATURES) throw new Error(`the space holds ${counted.count} of ${FEATURES} features`);
  return { rate, cpu, space };
}

const tagsOf = (body: Buffer): string[] => {
  const feature = JSON.parse(body.toString()) as { properties: { '@ns:com:here:xyz': { tags: string[] } } };
  return feature.properties['@ns:com:here:xyz'].tags;
};

/** The processors ran: a capital got the rule's tag in the processors space, and not in the plain one. */
async function checkTagged(client: HubClient, capitalId: string, processed: string, plain: string): Promise<void> {
  const path = (space: string) => `/hub/spaces/${space}/features/${capitalId}`;
  if (!tagsOf(await client.expect(200, 'GET', path(processed))).includes('capital')) throw new Error(`capital ${capitalId} was not tagged by the rule`);
  if (tagsOf(await client.expect(200, 'GET', path(plain))).includes('capital')) throw new Error(`capital ${capitalId} was tagged in the plain space`);
}

export async function processorsIngest(bench: ProcessorsBench): Promise<void> {
  const cities = loadCities(FEATURES);
  if (cities.length < FEATURES) throw new Error(`only ${cities.length} cities for ${FEATURES} features`);
  const body = Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: cities.map(cityFeature) }));
  const capital = cities.find((city) => city.featureCode === 'PPLC');
  if (!capital) throw new Error('no capital among the cities');

  bench.log(`processors: PUT of ${FEATURES} cities into a plain space and a space with both processors, ${bench.turns} turns`);
  // Untimed PUTs first warm up the JIT on both paths: jsonpath-plus's filter evaluation runs about four times
  // slower on its first 10,000 features than from the third time on.
  const spaces: string[] = [];
  for (let warm = 0; warm < WARM_UPS; warm++) {
    const plain = await putInto(bench, false, body);
    const processed = await putInto(bench, true, body);
    await checkTagged(bench.client, String(capital.cityId), processed.space, plain.space);
    spaces.push(plain.space, processed.space);
  }

  const plainRuns: Put[] = [];
  const processedRuns: Put[] = [];
  for (let turn = 0; turn < bench.turns; turn++) {
    // The side that goes first alternates, so that neither always follows the other's garbage.
    for (const processors of turn % 2 === 0 ? [false, true] : [true, false]) {
      const put = await putInto(bench, processors, body);
      (processors ? processedRuns : plainRuns).push(put);
      spaces.push(put.space);
    }
    // Fewer stored features keep the turns alike.
    while (spaces.length > 0) await bench.client.expect(204, 'DELETE', `/hub/spaces/${spaces.pop()}`);
  }
  const medianRate = (runs: Put[]): Rate => ({ items: FEATURES, seconds: median(runs.map((run) => run.rate.seconds)) });
  const percent = (ratio: number) => `${(100 * ratio).toFixed(0)}%`;
  const ratios = processedRuns.map((run, turn) => perSecond(run.rate) / perSecond(plainRuns[turn].rate));
  bench.note(`Processors PUT features/s against the plain PUT's, turn by turn: ${ratios.map(percent).join(', ')}.`);
  const plainCpu = median(plainRuns.map((run) => run.cpu));
  const processedCpu = median(processedRuns.map((run) => run.cpu));
  bench.note(`Hub CPU per ${FEATURES.toLocaleString('en-US')}-feature PUT (median): plain ${(plainCpu * 1000).toFixed(0)} ms, ` +
    `with processors ${(processedCpu * 1000).toFixed(0)} ms (plain/processors ${percent(plainCpu / processedCpu)}).`);
  bench.addRow({
    figure: `PUT ${FEATURES.toLocaleString('en-US')} features, schema + 3 tagging rules`, unit: 'features/s',
    http: medianRate(processedRuns), floor: medianRate(plainRuns), goal: bench.goal,
    note: `floor: the same PUT into a plain space; 1 request, new space each; the two take turns; median of ${bench.turns} each`,
  });
}
