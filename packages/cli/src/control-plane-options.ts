import type { AdminListenerOptions, ControlPlaneStartOptions, DeclarativeStartOptions } from '@gatehouse/control-plane';
import { listenText } from './admin-listener';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

/** What the node shares with the admin API besides its settings. */
type AdminShared = Pick<AdminListenerOptions, 'bus' | 'secret' | 'log' | 'statusExtras' | 'configuration' | 'beforeAdminListens'>;

/** The admin API's listener and what `GET /` says of the node, from the settings. */
function adminListenerOptions(settings: Settings, shared: AdminShared): AdminListenerOptions {
  return {
    ...shared,
    adminListen: listenText(settings.adminListen),
    adminSsl: settings.adminListen.flags?.ssl === true,
    adminCertificate: settings.adminTlsCert && settings.adminTlsKey ? { cert: settings.adminTlsCert, key: settings.adminTlsKey } : null,
    proxyListen: settings.role === 'all' ? [listenText(settings.proxyListen), ...(settings.proxyTlsListen ? [`${listenText(settings.proxyTlsListen)} http2 ssl`] : [])] : [],
    kongRole: settings.role === 'all' ? 'traditional' : 'control_plane',
    routerFlavor: settings.routerFlavor,
    adminGuiOrigins: settings.adminGuiOrigins,
    adminHosts: settings.adminHosts,
    configBodyLimit: settings.adminMaxConfigBody,
    dataDir: settings.dataDir,
    version: GATEHOUSE_VERSION,
  };
}

/** A control plane over the database the settings name; the status listener is its own only for the control-plane role. */
export function controlPlaneOptions(
  settings: Settings,
  shared: AdminShared & Pick<ControlPlaneStartOptions, 'extensions' | 'metrics' | 'health' | 'logLevel'>,
): ControlPlaneStartOptions {
  const { extensions, metrics, health, logLevel, ...admin } = shared;
  return {
    ...adminListenerOptions(settings, admin),
    databaseUrl: settings.databaseUrl,
    keyringSecret: settings.keyringSecret,
    enforceRbac: settings.enforceRbac,
    adminToken: settings.adminToken,
    statusListen: settings.role === 'control_plane' && settings.statusListen ? listenText(settings.statusListen) : null,
    ...(extensions ? { extensions } : {}),
    ...(metrics ? { metrics } : {}),
    ...(health !== undefined ? { health } : {}),
    ...(logLevel ? { logLevel } : {}),
  };
}

/** A node without a database: the settings' declarative file; a control plane over Redis keeps its document there. */
export function declarativeOptions(settings: Settings, shared: AdminShared & { admin: boolean }): DeclarativeStartOptions {
  const { admin, ...rest } = shared;
  return {
    ...adminListenerOptions(settings, rest),
    admin,
    declarativeConfig: settings.declarativeConfig,
    documents: settings.redisUrl && settings.role !== 'data_plane' ? { redisUrl: settings.redisUrl, redisPrefix: settings.redisPrefix } : null,
  };
}
