// A custom plugin in Gatehouse's own plugin contract, loaded with GATEHOUSE_PLUGINS=bundled,./examples/plugins/hello-header
// It sets one header on the request sent upstream, naming the consumer when authentication chose one.
import { definePlugin, z } from '@gatehouse/plugins';

const configSchema = z.object({ header_name: z.string().default('x-hello'), greeting: z.string().default('hello') }).strict();

export const plugin = definePlugin<z.infer<typeof configSchema>, null>({
  name: 'hello-header',
  priority: 900,
  version: '1.0.0',
  configSchema,
  auth: false,
  noConsumer: false,
  access: (ctx, config) => {
    ctx.upstream.setHeader(config.header_name, `${config.greeting} ${ctx.consumer?.username ?? 'anonymous'}`);
  },
});
