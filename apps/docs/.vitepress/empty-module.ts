// Stands in for Node-only modules (Dawn's `webgpu`, `node:fs`) in the site's bundles. @gpuhash/core
// imports them only when it runs in Node; in a browser it uses navigator.gpu and never calls these.
export function create(): never {
  throw new Error('webgpu (Dawn) is a Node module; in the browser gpuhash uses navigator.gpu');
}
export function existsSync(): boolean {
  return false;
}
export default { create, existsSync };
