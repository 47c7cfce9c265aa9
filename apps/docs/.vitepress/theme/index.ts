import type { Theme } from 'vitepress';
import DefaultTheme from 'vitepress/theme';
import BenchResults from './components/BenchResults.vue';
import CachePlayground from './components/CachePlayground.vue';
import DeviceInfo from './components/DeviceInfo.vue';
import HiveBucketDiagram from './components/HiveBucketDiagram.vue';
import Playground from './components/Playground.vue';
import ProbeDiagram from './components/ProbeDiagram.vue';
import SlabListDiagram from './components/SlabListDiagram.vue';
import TwinCheck from './components/TwinCheck.vue';
import './custom.css';

// The default theme plus the site's own components, available in every page's markdown.
export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component('Playground', Playground);
    app.component('CachePlayground', CachePlayground);
    app.component('BenchResults', BenchResults);
    app.component('ProbeDiagram', ProbeDiagram);
    app.component('HiveBucketDiagram', HiveBucketDiagram);
    app.component('SlabListDiagram', SlabListDiagram);
    app.component('DeviceInfo', DeviceInfo);
    app.component('TwinCheck', TwinCheck);
  },
} satisfies Theme;
