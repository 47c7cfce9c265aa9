export { default } from '../../tsup.shared';
