// Web Mercator tile numbers computed by the tests themselves (not by the hub's code), for tile paths and oracles.

export const webX = (lon: number, level: number) => Math.floor(((lon + 180) / 360) * 2 ** level);

export const webY = (lat: number, level: number) => {
  const radians = (lat * Math.PI) / 180;
  return Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * 2 ** level);
};

/** The `level_x_y` id of the web tile holding the place. */
export const webTileId = (level: number, lon: number, lat: number) => `${level}_${webX(lon, level)}_${webY(lat, level)}`;
