import { serverlessPlugin } from '../pre-function/serverless';

/** Kong's post-function: Lua snippets per phase, run after every other plugin (priority -1000). */
export const postFunction = serverlessPlugin('post-function', -1000);
