export { mountOAuth2TokenRoutes, oauth2TokensExtension } from './routes';
