// Strict declarations of the few JSTS modules src/geo uses; JSTS's own generated types are all `any`.

declare module 'jsts/org/locationtech/jts/geom/Coordinate.js' {
  export default class Coordinate {
    constructor(x: number, y: number);
    x: number;
    y: number;
  }
}

declare module 'jsts/java/util/ArrayList.js' {
  export default class ArrayList<T> {
    constructor();
    add(item: T): boolean;
    size(): number;
  }
}

declare module 'jsts/org/locationtech/jts/noding/BasicSegmentString.js' {
  import type Coordinate from 'jsts/org/locationtech/jts/geom/Coordinate.js';
  export default class BasicSegmentString {
    constructor(points: Coordinate[], data: null);
  }
}

declare module 'jsts/org/locationtech/jts/noding/FastSegmentSetIntersectionFinder.js' {
  import type ArrayList from 'jsts/java/util/ArrayList.js';
  import type BasicSegmentString from 'jsts/org/locationtech/jts/noding/BasicSegmentString.js';
  /** Indexes a fixed set of segments once; reports whether any of them touches or crosses a tested segment. */
  export default class FastSegmentSetIntersectionFinder {
    constructor(base: ArrayList<BasicSegmentString>);
    intersects(tested: ArrayList<BasicSegmentString>): boolean;
  }
}

declare module 'jsts/org/locationtech/jts/geom/Geometry.js' {
  import type Envelope from 'jsts/org/locationtech/jts/geom/Envelope.js';
  export default class Geometry {
    isEmpty(): boolean;
    getDimension(): number;
    getGeometryType(): string;
    getNumGeometries(): number;
    getGeometryN(index: number): Geometry;
    getEnvelopeInternal(): Envelope;
    intersection(other: Geometry): Geometry;
    buffer(distance: number, quadrantSegments?: number): Geometry;
    isValid(): boolean;
    /** The DE-9IM predicates monkey.js adds (RelateOp). */
    within(other: Geometry): boolean;
    contains(other: Geometry): boolean;
    equalsTopo(other: Geometry): boolean;
    touches(other: Geometry): boolean;
    crosses(other: Geometry): boolean;
    overlaps(other: Geometry): boolean;
  }
}

declare module 'jsts/org/locationtech/jts/geom/Envelope.js' {
  export default class Envelope {
    getMinX(): number;
    getMinY(): number;
    getMaxX(): number;
    getMaxY(): number;
  }
}

declare module 'jsts/org/locationtech/jts/geom/GeometryFactory.js' {
  export default class GeometryFactory {
    constructor();
  }
}

declare module 'jsts/org/locationtech/jts/io/GeoJSONReader.js' {
  import type Geometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
  import type GeometryFactory from 'jsts/org/locationtech/jts/geom/GeometryFactory.js';
  export default class GeoJSONReader {
    constructor(factory: GeometryFactory);
    read(geometry: object): Geometry;
  }
}

declare module 'jsts/org/locationtech/jts/io/GeoJSONWriter.js' {
  import type Geometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
  export default class GeoJSONWriter {
    constructor();
    write(geometry: Geometry): { type: string; coordinates: unknown };
  }
}

declare module 'jsts/org/locationtech/jts/algorithm/locate/IndexedPointInAreaLocator.js' {
  import type Coordinate from 'jsts/org/locationtech/jts/geom/Coordinate.js';
  import type Geometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
  /** Location of a point in a polygonal geometry: 0 interior, 1 boundary, 2 exterior (JTS Location). */
  export default class IndexedPointInAreaLocator {
    constructor(polygonal: Geometry);
    locate(point: Coordinate): number;
  }
}

declare module 'jsts/org/locationtech/jts/algorithm/RayCrossingCounter.js' {
  import type Coordinate from 'jsts/org/locationtech/jts/geom/Coordinate.js';
  export default class RayCrossingCounter {
    /** 0 interior, 1 boundary, 2 exterior (JTS Location). */
    static locatePointInRing(point: Coordinate, ring: Coordinate[]): number;
  }
}

declare module 'jsts/org/locationtech/jts/algorithm/PointLocation.js' {
  import type Coordinate from 'jsts/org/locationtech/jts/geom/Coordinate.js';
  export default class PointLocation {
    static isOnLine(point: Coordinate, line: Coordinate[]): boolean;
  }
}

declare module 'jsts/org/locationtech/jts/monkey.js' {}

declare module 'jsts/org/locationtech/jts/simplify/TopologyPreservingSimplifier.js' {
  import type Geometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
  export default class TopologyPreservingSimplifier {
    static simplify(geometry: Geometry, distanceTolerance: number): Geometry;
  }
}
