// The part of vt-pbf (which ships no types) that the hub uses: encoding geojson-vt tiles as MVT.
declare module 'vt-pbf' {
  import type { LegacyTile } from 'geojson-vt';

  const vtpbf: {
    fromGeojsonVt(layers: Record<string, LegacyTile>, options: { version: 2; extent: number }): Uint8Array;
  };
  export default vtpbf;
}
