/** The packages the API reference covers (folder names under packages/), in sidebar order. */
export declare const API_PACKAGES: string[];
