export { composeWgsl, constantDeclaration, sourceKey, wgslModule } from './compose';
export type { ComposeOptions, ConstantValue, WgslModule } from './compose';
export { gridModule } from './grid';
