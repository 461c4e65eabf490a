// The small part of autocannon's API the benchmark uses (the package ships no type declarations).
declare module 'autocannon' {
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
  }

  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests to make; then duration is ignored. */
    amount?: number;
    /** Milliseconds between samples; the run ends at the first sample after its last answer. */
    sampleInt?: number;
    headers?: Record<string, string>;
    requests?: Array<RawRequest & { setupRequest?: (request: RawRequest) => RawRequest }>;
  }

  interface Result {
    /** `total` counts the completed requests. */
    requests: { total: number; average: number };
    /** Seconds. */
    duration: number;
    errors: number;
    non2xx: number;
    /** Answers by status code. */
    statusCodeStats: Record<string, { count: number }>;
    latency: { average: number; p50: number; p99: number };
    /** Bytes received, headers included. */
    throughput: { total: number; average: number };
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
