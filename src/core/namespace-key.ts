// The member of feature properties that holds what the hub keeps about a feature (API.md 4.1), named once for every layer.
export const NS = '@ns:com:here:xyz';
