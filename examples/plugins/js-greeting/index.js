// A plugin written for Kong's JavaScript plugin server (the kong-pdk module shape), run unchanged by Gatehouse:
// GATEHOUSE_PLUGINS=bundled,./examples/plugins/js-greeting (named after its folder).
'use strict';

class KongPlugin {
  constructor(config) {
    this.config = config;
  }

  async access(kong) {
    const host = await kong.request.getHeader('host');
    if ((await kong.request.getHeader('x-refuse')) === 'yes') {
      return kong.response.exit(403, { message: `refused by ${this.config.message}` });
    }
    await kong.service.request.setHeader('x-greeting', `${this.config.message} from ${host}`);
    await kong.response.setHeader('x-greeting-path', await kong.request.getPath());
  }
}

module.exports = {
  Plugin: KongPlugin,
  Schema: [{ message: { type: 'string', default: 'hello' } }],
  Version: '0.1.0',
  Priority: 0,
};
