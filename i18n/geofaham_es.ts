<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es_ES">
    <context>
        <name>GeoFaham</name>
        <message>
            <source>GeoFaham</source>
            <translation>GeoFaham</translation>
        </message>
        <message>
            <source>GeoFaham chat</source>
            <translation>Chat de GeoFaham</translation>
        </message>
        <message>
            <source>Send</source>
            <translation>Enviar</translation>
        </message>
        <message>
            <source>You</source>
            <translation>Usted</translation>
        </message>
        <message>
            <source>Problem</source>
            <translation>Problema</translation>
        </message>
        <message>
            <source>Your question (Ctrl+Enter to send)</source>
            <translation>Su pregunta (Ctrl+Intro para enviar)</translation>
        </message>
        <message>
            <source>Ask a disaster-response question, e.g. "Which hospitals lie within 1 km of the Eaton fire perimeter?"</source>
            <translation>Haga una pregunta de respuesta a desastres, p. ej. «¿Qué hospitales están a menos de 1 km del perímetro del incendio de Eaton?»</translation>
        </message>
        <message>
            <source>GeoFaham cannot start because these Python packages are missing: {names}. Install them with: {command} (or run "{setup}" in the GeoFaham source folder), then restart QGIS.</source>
            <translation>GeoFaham no puede iniciarse porque faltan estos paquetes de Python: {names}. Instálelos con: {command} (o ejecute «{setup}» en la carpeta de código de GeoFaham) y reinicie QGIS.</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>Cancelar</translation>
        </message>
        <message>
            <source>Planning…</source>
            <translation>Planificando…</translation>
        </message>
        <message>
            <source>Plan: </source>
            <translation>Plan: </translation>
        </message>
        <message>
            <source>Step {n}: {goal}</source>
            <translation>Paso {n}: {goal}</translation>
        </message>
        <message>
            <source>Something went wrong: {message}. Details are in the GeoFaham log panel.</source>
            <translation>Algo salió mal: {message}. Los detalles están en el panel de registro de GeoFaham.</translation>
        </message>
        <message>
            <source>A question is still running; wait for its answer.</source>
            <translation>Hay una pregunta en curso; espere su respuesta.</translation>
        </message>
        <message>
            <source>Area of interest: the disaster's own area</source>
            <translation>Zona de interés: la zona del desastre</translation>
        </message>
        <message>
            <source>Step</source>
            <translation>Paso</translation>
        </message>
        <message>
            <source>Operation</source>
            <translation>Operación</translation>
        </message>
        <message>
            <source>Status</source>
            <translation>Estado</translation>
        </message>
        <message>
            <source>Artifact</source>
            <translation>Artefacto</translation>
        </message>
        <message>
            <source>From selection</source>
            <translation>Desde la selección</translation>
        </message>
        <message>
            <source>Draw</source>
            <translation>Dibujar</translation>
        </message>
        <message>
            <source>Clear</source>
            <translation>Borrar</translation>
        </message>
        <message>
            <source>pending</source>
            <translation>pendiente</translation>
        </message>
        <message>
            <source>Area of interest: {aoi}</source>
            <translation>Zona de interés: {aoi}</translation>
        </message>
        <message>
            <source>Use as AOI (GeoFaham)</source>
            <translation>Usar como zona de interés (GeoFaham)</translation>
        </message>
        <message>
            <source>Settings…</source>
            <translation>Configuración…</translation>
        </message>
        <message>
            <source>Settings saved; the next question uses them.</source>
            <translation>Configuración guardada; la próxima pregunta la usará.</translation>
        </message>
        <message>
            <source>The GeoFaham session of this project is missing: {path}</source>
            <translation>Falta la sesión de GeoFaham de este proyecto: {path}</translation>
        </message>
        <message>
            <source>Disaster analysis</source>
            <translation>Análisis de desastres</translation>
        </message>
        <message>
            <source>Input layer</source>
            <translation>Capa de entrada</translation>
        </message>
        <message>
            <source>Distance (metres)</source>
            <translation>Distancia (metros)</translation>
        </message>
        <message>
            <source>Buffered</source>
            <translation>Área de influencia</translation>
        </message>
        <message>
            <source>Features</source>
            <translation>Entidades</translation>
        </message>
        <message>
            <source>Reference (hazard) layer</source>
            <translation>Capa de referencia (amenaza)</translation>
        </message>
        <message>
            <source>Within distance</source>
            <translation>A distancia</translation>
        </message>
        <message>
            <source>Reference layer</source>
            <translation>Capa de referencia</translation>
        </message>
        <message>
            <source>k</source>
            <translation>k</translation>
        </message>
        <message>
            <source>Nearest</source>
            <translation>Más cercanos</translation>
        </message>
        <message>
            <source>Building damage layer</source>
            <translation>Capa de daños en edificios</translation>
        </message>
        <message>
            <source>Damage field</source>
            <translation>Campo de daños</translation>
        </message>
        <message>
            <source>Only inside this area</source>
            <translation>Solo dentro de esta zona</translation>
        </message>
        <message>
            <source>Damage counts</source>
            <translation>Recuentos de daños</translation>
        </message>
        <message>
            <source>Invalid input layer: {name}</source>
            <translation>Capa de entrada no válida: {name}</translation>
        </message>
        <message>
            <source>{status} in {seconds:.1f} s · {prompt} + {completion} tokens · run {run}</source>
            <translation>{status} en {seconds:.1f} s · {prompt} + {completion} tokens · ejecución {run}</translation>
        </message>
        <message>
            <source>Select a vector layer first.</source>
            <translation>Seleccione primero una capa vectorial.</translation>
        </message>
        <message>
            <source>No features are selected in {layer}.</source>
            <translation>No hay entidades seleccionadas en {layer}.</translation>
        </message>
        <message>
            <source>This cannot be used as the area of interest: {why}</source>
            <translation>Esto no puede usarse como zona de interés: {why}</translation>
        </message>
        <message>
            <source>GeoFaham settings</source>
            <translation>Configuración de GeoFaham</translation>
        </message>
        <message>
            <source>Use the embedded local model (offline)</source>
            <translation>Usar el modelo local integrado (sin conexión)</translation>
        </message>
        <message>
            <source>Test connection</source>
            <translation>Probar conexión</translation>
        </message>
        <message>
            <source>Models</source>
            <translation>Modelos</translation>
        </message>
        <message>
            <source>(embedded engine)</source>
            <translation>(motor integrado)</translation>
        </message>
        <message>
            <source>PostGIS connection</source>
            <translation>Conexión PostGIS</translation>
        </message>
        <message>
            <source>STAC API</source>
            <translation>API STAC</translation>
        </message>
        <message>
            <source>Overpass API</source>
            <translation>API Overpass</translation>
        </message>
        <message>
            <source>Data</source>
            <translation>Datos</translation>
        </message>
        <message>
            <source>Limits</source>
            <translation>Límites</translation>
        </message>
        <message>
            <source>Server URL</source>
            <translation>URL del servidor</translation>
        </message>
        <message>
            <source>Model</source>
            <translation>Modelo</translation>
        </message>
        <message>
            <source>API key (authentication)</source>
            <translation>Clave de API (autenticación)</translation>
        </message>
        <message>
            <source>Maximum turns</source>
            <translation>Turnos máximos</translation>
        </message>
        <message>
            <source>Stall budget</source>
            <translation>Presupuesto de bloqueos</translation>
        </message>
        <message>
            <source>Maximum replans</source>
            <translation>Replanificaciones máximas</translation>
        </message>
        <message>
            <source>All roles</source>
            <translation>Todos los roles</translation>
        </message>
        <message>
            <source>Connected to {model} at {url}</source>
            <translation>Conectado a {model} en {url}</translation>
        </message>
        <message>
            <source>Role: {role}</source>
            <translation>Rol: {role}</translation>
        </message>
        <message>
            <source>Embedded model ready: {path}</source>
            <translation>Modelo integrado listo: {path}</translation>
        </message>
        <message>
            <source>Embedded model missing: run make setup ({path})</source>
            <translation>Falta el modelo integrado: ejecute make setup ({path})</translation>
        </message>
        <message>
            <source>Connection failed: {error}</source>
            <translation>Error de conexión: {error}</translation>
        </message>
        <message>
            <source>running</source>
            <translation>en curso</translation>
        </message>
        <message>
            <source>done</source>
            <translation>hecho</translation>
        </message>
        <message>
            <source>failed</source>
            <translation>fallido</translation>
        </message>
        <message>
            <source>reused</source>
            <translation>reutilizado</translation>
        </message>
        <message>
            <source>skipped</source>
            <translation>omitido</translation>
        </message>
        <message>
            <source>Buffers and dissolves features by a distance in metres, computed in a local metric projection whatever the layer's CRS (degrees included).</source>
            <translation>Crea y disuelve un área de influencia a una distancia en metros, calculada en una proyección métrica local sea cual sea el SRC de la capa (grados incluidos).</translation>
        </message>
        <message>
            <source>Keeps the features within a distance in metres of any reference geometry and adds their geodesic distance (distance_m), nearest first.</source>
            <translation>Conserva las entidades a menos de una distancia en metros de alguna geometría de referencia y añade su distancia geodésica (distance_m), las más cercanas primero.</translation>
        </message>
        <message>
            <source>Ranks the k features nearest to the reference layer with their geodesic distance (distance_m).</source>
            <translation>Ordena las k entidades más cercanas a la capa de referencia con su distancia geodésica (distance_m).</translation>
        </message>
        <message>
            <source>Counts buildings per normalised damage class (none, affected, minor, major, destroyed) from a damage field such as CAL FIRE DINS 'DAMAGE', optionally only those inside an area.</source>
            <translation>Cuenta los edificios por clase de daño normalizada (none, affected, minor, major, destroyed) a partir de un campo como 'DAMAGE' de CAL FIRE DINS, opcionalmente solo dentro de una zona.</translation>
        </message>
        <message>
            <source>Buffer in metres (any CRS)</source>
            <translation>Área de influencia en metros (cualquier SRC)</translation>
        </message>
        <message>
            <source>Features within a distance (geodesic)</source>
            <translation>Entidades a una distancia (geodésica)</translation>
        </message>
        <message>
            <source>k nearest features (geodesic)</source>
            <translation>k entidades más cercanas (geodésica)</translation>
        </message>
        <message>
            <source>Building damage counts by class</source>
            <translation>Recuento de daños en edificios por clase</translation>
        </message>
        <message>
            <source>Export the last run…</source>
            <translation>Exportar la última ejecución…</translation>
        </message>
        <message>
            <source>There is no run to export yet.</source>
            <translation>Todavía no hay ninguna ejecución que exportar.</translation>
        </message>
        <message>
            <source>Export the last run to</source>
            <translation>Exportar la última ejecución a</translation>
        </message>
        <message>
            <source>Run exported to {path}</source>
            <translation>Ejecución exportada a {path}</translation>
        </message>
        <message>
            <source>Computes a spectral index from a multi-band image whose bands are named (blue, green, red, nir, swir16, swir22 or Sentinel-2 B02…B12).</source>
            <translation>Calcula un índice espectral a partir de una imagen multibanda con bandas nombradas (blue, green, red, nir, swir16, swir22 o Sentinel-2 B02…B12).</translation>
        </message>
        <message>
            <source>dNBR from a pre-fire and a post-fire image (nir and swir22 bands), classified into the USGS severity classes: unburned &lt; 0.1, low, moderate-low, moderate-high, high &gt;= 0.66.</source>
            <translation>dNBR a partir de una imagen anterior y otra posterior al incendio (bandas nir y swir22), clasificado en las clases de severidad USGS: no quemado &lt; 0,1, baja, moderada-baja, moderada-alta, alta &gt;= 0,66.</translation>
        </message>
        <message>
            <source>Spectral index (NDVI, NDWI, MNDWI, NBR)</source>
            <translation>Índice espectral (NDVI, NDWI, MNDWI, NBR)</translation>
        </message>
        <message>
            <source>dNBR burn severity (USGS classes)</source>
            <translation>Severidad del fuego dNBR (clases USGS)</translation>
        </message>
        <message>
            <source>Image</source>
            <translation>Imagen</translation>
        </message>
        <message>
            <source>Index</source>
            <translation>Índice</translation>
        </message>
        <message>
            <source>Summary</source>
            <translation>Resumen</translation>
        </message>
        <message>
            <source>Pre-fire image</source>
            <translation>Imagen previa al incendio</translation>
        </message>
        <message>
            <source>Post-fire image</source>
            <translation>Imagen posterior al incendio</translation>
        </message>
        <message>
            <source>Burn severity</source>
            <translation>Severidad del fuego</translation>
        </message>
        <message>
            <source>Running {tool}</source>
            <translation>Ejecutando {tool}</translation>
        </message>
        <message>
            <source>Work offline: no requests to Overpass, Nominatim or STAC APIs</source>
            <translation>Trabajar sin conexión: ninguna solicitud a Overpass, Nominatim ni a las API STAC</translation>
        </message>
        <message>
            <source>Nominatim (place names)</source>
            <translation>Nominatim (nombres de lugares)</translation>
        </message>
        <message>
            <source>Data folder (sample layers, OSM extracts)</source>
            <translation>Carpeta de datos (capas de ejemplo, extractos OSM)</translation>
        </message>
        <message>
            <source>Python sandbox: CPU time</source>
            <translation>Entorno aislado de Python: tiempo de CPU</translation>
        </message>
        <message>
            <source>Python sandbox: memory</source>
            <translation>Entorno aislado de Python: memoria</translation>
        </message>
        <message>
            <source>Partial: the workflow did not complete; the values below may be incomplete.</source>
            <translation>Parcial: el proceso no terminó; los valores siguientes pueden estar incompletos.</translation>
        </message>
        <message>
            <source>Answer: yes</source>
            <translation>Respuesta: sí</translation>
        </message>
        <message>
            <source>Answer: no</source>
            <translation>Respuesta: no</translation>
        </message>
        <message>
            <source>Stated value</source>
            <translation>Valor indicado</translation>
        </message>
        <message>
            <source>Value</source>
            <translation>Valor</translation>
        </message>
        <message>
            <source>Unit</source>
            <translation>Unidad</translation>
        </message>
        <message>
            <source>Not the answer to the question.</source>
            <translation>No es la respuesta a la pregunta.</translation>
        </message>
        <message>
            <source>Not applied: {parts}. The values below were computed without it.</source>
            <translation>No aplicado: {parts}. Los valores siguientes se calcularon sin ello.</translation>
        </message>
        <message>
            <source>Your layers GeoFaham may read:</source>
            <translation>Sus capas que GeoFaham puede leer:</translation>
        </message>
        <message>
            <source>Ticked project layers are copied into the session when you ask, so a question can name them.</source>
            <translation>Las capas marcadas del proyecto se copian en la sesión al preguntar, para que una pregunta pueda nombrarlas.</translation>
        </message>
        <message>
            <source>not applied</source>
            <translation>no aplicado</translation>
        </message>
        <message>
            <source>Parts of the question</source>
            <translation>Partes de la pregunta</translation>
        </message>
        <message>
            <source>applied by {steps}</source>
            <translation>aplicado por {steps}</translation>
        </message>
        <message>
            <source>Situation report</source>
            <translation>Informe de situación</translation>
        </message>
        <message>
            <source>Map extent</source>
            <translation>Extensión del mapa</translation>
        </message>
        <message>
            <source>Legend</source>
            <translation>Leyenda</translation>
        </message>
        <message>
            <source>Produced by GeoFaham from the data named above; numbers are computed, not verified on the ground. Check them before operational use.</source>
            <translation>Elaborado por GeoFaham con los datos citados; las cifras son calculadas, no verificadas sobre el terreno. Compruébelas antes de un uso operativo.</translation>
        </message>
        <message>
            <source>Made {made} · run {run} ({status}), finished {when}</source>
            <translation>Elaborado {made} · ejecución {run} ({status}), terminada {when}</translation>
        </message>
        <message>
            <source>Question: {question}</source>
            <translation>Pregunta: {question}</translation>
        </message>
        <message>
            <source>How it was computed</source>
            <translation>Cómo se calculó</translation>
        </message>
        <message>
            <source>Sources and licences</source>
            <translation>Fuentes y licencias</translation>
        </message>
        <message>
            <source>Not applied: {part}</source>
            <translation>No aplicado: {part}</translation>
        </message>
        <message>
            <source>Key numbers</source>
            <translation>Cifras clave</translation>
        </message>
        <message>
            <source>Answer</source>
            <translation>Respuesta</translation>
        </message>
        <message>
            <source>CRS: {crs}</source>
            <translation>SRC: {crs}</translation>
        </message>
        <message>
            <source>licence</source>
            <translation>licencia</translation>
        </message>
        <message>
            <source>… and {n} more</source>
            <translation>… y {n} más</translation>
        </message>
        <message>
            <source>Limitations</source>
            <translation>Limitaciones</translation>
        </message>
        <message>
            <source>Situation report written (also in the project layouts):</source>
            <translation>Informe de situación escrito (también en las composiciones del proyecto):</translation>
        </message>
        <message>
            <source>No finished run {run} in this session.</source>
            <translation>No hay ninguna ejecución terminada {run} en esta sesión.</translation>
        </message>
        <message>
            <source>The situation report failed: {message}. Details are in the GeoFaham log panel.</source>
            <translation>El informe de situación falló: {message}. Los detalles están en el registro de GeoFaham.</translation>
        </message>
        <message>
            <source>Situation report of the last answer</source>
            <translation>Informe de situación de la última respuesta</translation>
        </message>
        <message>
            <source>There is no answered run to report yet.</source>
            <translation>Todavía no hay ninguna respuesta para un informe.</translation>
        </message>
        <message>
            <source>PARTIAL: not the answer to the question (see Limitations).</source>
            <translation>PARCIAL: no es la respuesta a la pregunta (ver Limitaciones).</translation>
        </message>
        <message>
            <source>OpenStreetMap basemap behind the results (online only)</source>
            <translation>Mapa base de OpenStreetMap bajo los resultados (solo en línea)</translation>
        </message>
    </context>
</TS>
