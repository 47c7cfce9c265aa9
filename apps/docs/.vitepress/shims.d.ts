// Single-file components, for TypeScript files that import them (tsc does not read .vue files).
declare module '*.vue' {
  import type { DefineComponent } from 'vue';

  const component: DefineComponent<object, object, unknown>;
  export default component;
}
