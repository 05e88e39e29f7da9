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
            <source>Resume</source>
            <translation>Reanudar</translation>
        </message>
        <message>
            <source>Run {run} ({why}): {question}</source>
            <translation>Ejecución {run} ({why}): {question}</translation>
        </message>
        <message>
            <source>interrupted</source>
            <translation>interrumpida</translation>
        </message>
        <message>
            <source>Resume run {run}: {question}</source>
            <translation>Reanudar la ejecución {run}: {question}</translation>
        </message>
        <message>
            <source>Resuming run {run}…</source>
            <translation>Reanudando la ejecución {run}…</translation>
        </message>
        <message>
            <source>timed out</source>
            <translation>tiempo agotado</translation>
        </message>
        <message>
            <source>cancelled</source>
            <translation>cancelada</translation>
        </message>
        <message>
            <source>Reprojects a layer to an EPSG code (EPSG:3832, 32760 ...) or a CRS chosen for the data by name: utm (the layer's own UTM zone), equal-area (Lambert equal-area centred on the data; EASE-Grid 2.0 when it is wide), local (transverse Mercator centred on it), polar-north (EPSG:3413), polar-south (EPSG:3031). Edges are densified first; lines and polygons crossing the antimeridian are cut at ±180° and joined again where the target has no seam, so they stay valid instead of wrapping round the globe.</source>
            <translation>Reproyecta una capa a un código EPSG (EPSG:3832, 32760 ...) o a un SRC elegido para los datos por su nombre: utm (la zona UTM de la capa), equal-area (acimutal equivalente de Lambert centrada en los datos; EASE-Grid 2.0 si son extensos), local (Mercator transversa centrada en ellos), polar-north (EPSG:3413), polar-south (EPSG:3031). Primero se densifican los bordes; las líneas y polígonos que cruzan el antimeridiano se cortan en ±180° y se vuelven a unir donde el destino no tiene costura, así siguen siendo válidos en vez de dar la vuelta al globo.</translation>
        </message>
        <message>
            <source>Overlays polygons on a square grid of the given cell size in metres, in the layer's UTM zone (cell edges at whole multiples of the size). Each cell the polygons touch gets the geodesic area they cover (area_km2) and each chosen count field (people, buildings) shared out by the part of each polygon's area inside it. The output is in that UTM CRS.</source>
            <translation>Superpone polígonos a una cuadrícula de celdas cuadradas del tamaño dado en metros, en la zona UTM de la capa (bordes de celda en múltiplos enteros del tamaño). Cada celda que tocan recibe el área geodésica que cubren (area_km2) y cada campo de recuento elegido (personas, edificios) repartido según la parte del área de cada polígono que cae en ella. La salida está en ese SRC UTM.</translation>
        </message>
        <message>
            <source>Removes polygon parts smaller than an area in square metres or thinner than a compactness (Polsby-Popper 4πA/P²: 1 for a disc, 0.785 for a square, 0.03 for a 1 × 100 strip), both measured in an equal-area projection centred on the data whatever the layer's CRS. A feature left with no part is removed; points and lines are kept.</source>
            <translation>Elimina las partes de polígonos menores que un área en metros cuadrados o más delgadas que una compacidad (Polsby-Popper 4πA/P²: 1 para un círculo, 0,785 para un cuadrado, 0,03 para una franja de 1 × 100), medidas en una proyección equivalente centrada en los datos sea cual sea el SRC de la capa. Una entidad sin partes restantes se elimina; puntos y líneas se conservan.</translation>
        </message>
        <message>
            <source>Lists what a vector file holds, one row per layer: its name, CRS ('none' when the file names none: then longitude/latitude is assumed), geometry types, feature count and fields with their types, and for a shapefile the field names left cut to 10 characters. Reads every format GeoFaham reads: GeoPackage, GeoJSON, Shapefile, FlatGeobuf, KML/KMZ, GeoParquet, CSV with a WKT, WKB or longitude/latitude column.</source>
            <translation>Enumera lo que contiene un archivo vectorial, una fila por capa: su nombre, su SRC ('none' si el archivo no nombra ninguno: se supone longitud/latitud), sus tipos de geometría, su número de entidades, sus campos con su tipo y, para un shapefile, los nombres de campo que quedaron cortados a 10 caracteres. Lee todos los formatos que lee GeoFaham: GeoPackage, GeoJSON, Shapefile, FlatGeobuf, KML/KMZ, GeoParquet, CSV con una columna WKT, WKB o longitud/latitud.</translation>
        </message>
        <message>
            <source>Reads a shapefile with its field names cut to the DBF's 10 characters restored: from the mapping given (short=full, separated by commas), else from a &lt;name&gt;.fieldnames.json sidecar or the aliases of an ESRI &lt;name&gt;.shp.xml. Text read with the wrong encoding (UTF-8 as Latin-1) is repaired. The names still looking cut are listed in the log.</source>
            <translation>Lee un shapefile restaurando los nombres de campo cortados a los 10 caracteres del DBF: desde la correspondencia dada (corto=completo, separados por comas), si no desde un archivo &lt;nombre&gt;.fieldnames.json o los alias de un &lt;nombre&gt;.shp.xml de ESRI. El texto leído con la codificación equivocada (UTF-8 leído como Latin-1) se repara. Los nombres que aún parecen cortados se listan en el registro.</translation>
        </message>
        <message>
            <source>Field data</source>
            <translation>Datos de campo</translation>
        </message>
        <message>
            <source>Reproject to a named CRS (antimeridian-safe)</source>
            <translation>Reproyectar a un SRC por nombre (seguro en el antimeridiano)</translation>
        </message>
        <message>
            <source>Area-weighted grid (counts shared by area)</source>
            <translation>Cuadrícula ponderada por área (recuentos repartidos por área)</translation>
        </message>
        <message>
            <source>Remove sliver polygons (area in m², thinness)</source>
            <translation>Eliminar polígonos residuales (área en m², delgadez)</translation>
        </message>
        <message>
            <source>File manifest (layers, CRS, geometry, counts)</source>
            <translation>Inventario de un archivo (capas, SRC, geometría, recuentos)</translation>
        </message>
        <message>
            <source>Restore truncated shapefile field names</source>
            <translation>Restaurar los nombres de campo cortados de un shapefile</translation>
        </message>
        <message>
            <source>Target CRS (EPSG code, or utm, equal-area, local, polar-north, polar-south)</source>
            <translation>SRC de destino (código EPSG, o utm, equal-area, local, polar-north, polar-south)</translation>
        </message>
        <message>
            <source>Reprojected</source>
            <translation>Reproyectada</translation>
        </message>
        <message>
            <source>CRS used</source>
            <translation>SRC usado</translation>
        </message>
        <message>
            <source>No target CRS given (an EPSG code, or utm, equal-area, polar-north ...)</source>
            <translation>No se indicó SRC de destino (un código EPSG, o utm, equal-area, polar-north ...)</translation>
        </message>
        <message>
            <source>Polygon layer</source>
            <translation>Capa de polígonos</translation>
        </message>
        <message>
            <source>Cell size (metres)</source>
            <translation>Tamaño de celda (metros)</translation>
        </message>
        <message>
            <source>Count fields to share out by area</source>
            <translation>Campos de recuento a repartir por área</translation>
        </message>
        <message>
            <source>Grid</source>
            <translation>Cuadrícula</translation>
        </message>
        <message>
            <source>Minimum area (m²)</source>
            <translation>Área mínima (m²)</translation>
        </message>
        <message>
            <source>Minimum compactness (4πA/P², 0 to 1)</source>
            <translation>Compacidad mínima (4πA/P², de 0 a 1)</translation>
        </message>
        <message>
            <source>Without slivers</source>
            <translation>Sin polígonos residuales</translation>
        </message>
        <message>
            <source>Sliver parts removed</source>
            <translation>Partes residuales eliminadas</translation>
        </message>
        <message>
            <source>Features removed</source>
            <translation>Entidades eliminadas</translation>
        </message>
        <message>
            <source>Vector file</source>
            <translation>Archivo vectorial</translation>
        </message>
        <message>
            <source>Manifest</source>
            <translation>Inventario</translation>
        </message>
        <message>
            <source>Shapefile</source>
            <translation>Shapefile</translation>
        </message>
        <message>
            <source>Shapefiles (*.shp *.SHP)</source>
            <translation>Shapefiles (*.shp *.SHP)</translation>
        </message>
        <message>
            <source>Field mapping (short=full, ...)</source>
            <translation>Correspondencia de campos (corto=completo, ...)</translation>
        </message>
        <message>
            <source>With full field names</source>
            <translation>Con los nombres de campo completos</translation>
        </message>
        <message>
            <source>No field name was restored: give a mapping, a sidecar or an ESRI .shp.xml</source>
            <translation>No se restauró ningún nombre de campo: indique una correspondencia, un archivo .fieldnames.json o un .shp.xml de ESRI</translation>
        </message>
        <message>
            <source>{n} cells in {crs}</source>
            <translation>{n} celdas en {crs}</translation>
        </message>
        <message>
            <source>'{pair}' is not a field mapping (write short=full name, e.g. populati_1=population_male)</source>
            <translation>'{pair}' no es una correspondencia de campo (escriba corto=nombre completo, p. ej. populati_1=population_male)</translation>
        </message>
        <message>
            <source>{name} is not a shapefile (.shp); other formats keep their full field names</source>
            <translation>{name} no es un shapefile (.shp); los demás formatos conservan sus nombres de campo completos</translation>
        </message>
        <message>
            <source>The input layer has no CRS, so it cannot be reprojected (set it in the layer's properties first)</source>
            <translation>La capa de entrada no tiene SRC, así que no se puede reproyectar (defínalo antes en las propiedades de la capa)</translation>
        </message>
        <message>
            <source>Road reachability through a hazard</source>
            <translation>Accesibilidad por carretera a través de una amenaza</translation>
        </message>
        <message>
            <source>Roads (OSM lines)</source>
            <translation>Carreteras (líneas OSM)</translation>
        </message>
        <message>
            <source>Hazard polygons</source>
            <translation>Polígonos de la amenaza</translation>
        </message>
        <message>
            <source>Origins</source>
            <translation>Orígenes</translation>
        </message>
        <message>
            <source>Targets</source>
            <translation>Destinos</translation>
        </message>
        <message>
            <source>Roads</source>
            <translation>Carreteras</translation>
        </message>
        <message>
            <source>Longest route (km, 0: any)</source>
            <translation>Ruta más larga (km, 0: sin límite)</translation>
        </message>
        <message>
            <source>Farthest a feature may be from a road (metres)</source>
            <translation>Distancia máxima de una entidad a una carretera (metros)</translation>
        </message>
        <message>
            <source>Reachability</source>
            <translation>Accesibilidad</translation>
        </message>
        <message>
            <source>Cut roads</source>
            <translation>Carreteras cortadas</translation>
        </message>
        <message>
            <source>Road segments cut</source>
            <translation>Tramos de carretera cortados</translation>
        </message>
        <message>
            <source>Origins that lose every target</source>
            <translation>Orígenes que pierden todos los destinos</translation>
        </message>
        <message>
            <source>Drivable roads</source>
            <translation>Carreteras transitables</translation>
        </message>
        <message>
            <source>All roads and paths</source>
            <translation>Todas las carreteras y caminos</translation>
        </message>
        <message>
            <source>Which origins can still reach which targets by road when a hazard cuts the network: network distance (m) and free-flow time (min) before and after, detour ratio and status (reachable, detour, cut off, unreachable before, off network), one row per origin and target at the origin. Without targets: whether each origin stays joined to the main road network. Roads are OpenStreetMap lines with a highway field (oneway, maxspeed, bridge read when present); a road touching the hazard is cut, bridges over it kept open, tunnels cut. Also writes the cut roads.</source>
            <translation>Qué orígenes pueden aún llegar a qué destinos por carretera cuando un peligro corta la red: distancia por la red (m) y tiempo a flujo libre (min) antes y después, razón de desvío y estado (accesible, desvío, cortado, inaccesible antes, fuera de la red), una fila por origen y destino, en el origen. Sin destinos: si cada origen sigue unido a la red principal de carreteras. Las carreteras son líneas de OpenStreetMap con un campo highway (oneway, maxspeed, bridge leídos si existen); una carretera que toca el peligro queda cortada, los puentes sobre él siguen abiertos y los túneles se cortan. También escribe las carreteras cortadas.</translation>
        </message>
        <message>
            <source>OpenStreetMap basemap behind the results (online only)</source>
            <translation>Mapa base de OpenStreetMap bajo los resultados (solo en línea)</translation>
        </message>
        <message>
            <source>an earlier result</source>
            <translation>un resultado anterior</translation>
        </message>
        <message>
            <source>your area</source>
            <translation>su zona</translation>
        </message>
        <message>
            <source>GeoFaham: {question}</source>
            <translation>GeoFaham: {question}</translation>
        </message>
        <message>
            <source>Draw the area of interest: click to add corners; right-click or double-click to finish; Esc cancels.</source>
            <translation>Dibuje el área de interés: haga clic para añadir vértices; clic derecho o doble clic para terminar; Esc cancela.</translation>
        </message>
        <message>
            <source>Drawing cancelled: the area of interest is unchanged.</source>
            <translation>Dibujo cancelado: el área de interés no cambia.</translation>
        </message>
        <message>
            <source>Writing the situation report…</source>
            <translation>Escribiendo el informe de situación…</translation>
        </message>
        <message>
            <source>A report is being written or a question is running: ask for this report when it ends.</source>
            <translation>Se está escribiendo un informe o una pregunta está en curso: pida este informe cuando termine.</translation>
        </message>
        <message>
            <source>Processing model written (opened in the Model Designer):</source>
            <translation>Modelo de procesamiento escrito (abierto en el modelador gráfico):</translation>
        </message>
        <message>
            <source>Processing model written:</source>
            <translation>Modelo de procesamiento escrito:</translation>
        </message>
        <message>
            <source>Open as Processing model</source>
            <translation>Abrir como modelo de procesamiento</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: it has no counted answer computed by its steps.</source>
            <translation>Esta ejecución no se puede abrir como modelo de procesamiento: no tiene una respuesta contada calculada por sus pasos.</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: step {step} ({tool}) has no Processing algorithm that computes the same thing.</source>
            <translation>Esta ejecución no se puede abrir como modelo de procesamiento: el paso {step} ({tool}) no tiene un algoritmo de procesamiento que calcule lo mismo.</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: its input {artifact} is not a vector layer.</source>
            <translation>Esta ejecución no se puede abrir como modelo de procesamiento: su entrada {artifact} no es una capa vectorial.</translation>
        </message>
        <message>
            <source>Answer: {step}</source>
            <translation>Respuesta: {step}</translation>
        </message>
        <message>
            <source>Answer of GeoFaham run {run}:</source>
            <translation>Respuesta de la ejecución GeoFaham {run}:</translation>
        </message>
        <message>
            <source>Buffers features by a distance in metres, computed in a local metric projection whatever the layer's CRS (degrees included): merged into one area, or one buffer per feature with its attributes.</source>
            <translation>Crea áreas de influencia a una distancia en metros, calculadas en una proyección métrica local sea cual sea el SRC de la capa (grados incluidos): fusionadas en un área, o una por entidad con sus atributos.</translation>
        </message>
        <message>
            <source>Counts the features of a layer, in total (one row, value 'all') or per value of a field (most frequent first, no value as '(none)'): a table of value and count. An empty layer counts 0.</source>
            <translation>Cuenta las entidades de una capa, en total (una fila, valor 'all') o por valor de un campo (la más frecuente primero, la ausencia de valor como '(none)'): una tabla de valores y recuentos. Una capa vacía cuenta 0.</translation>
        </message>
        <message>
            <source>Count features (in total or by a field)</source>
            <translation>Contar entidades (en total o por campo)</translation>
        </message>
        <message>
            <source>Merge the buffers into one area</source>
            <translation>Fusionar las áreas de influencia en un área</translation>
        </message>
        <message>
            <source>Count by this field</source>
            <translation>Contar por este campo</translation>
        </message>
        <message>
            <source>Counts</source>
            <translation>Recuentos</translation>
        </message>
        <message>
            <source>Features counted</source>
            <translation>Entidades contadas</translation>
        </message>
        <message>
            <source>The Processing model could not be written: {message}. Details are in the GeoFaham log panel.</source>
            <translation>No se pudo escribir el modelo de procesamiento: {message}. Los detalles están en el panel de registro de GeoFaham.</translation>
        </message>
        <message>
            <source>preparing the run's layers</source>
            <translation>preparando las capas de la ejecución</translation>
        </message>
        <message>
            <source>adding the map context</source>
            <translation>añadiendo el contexto del mapa</translation>
        </message>
        <message>
            <source>laying out the map</source>
            <translation>componiendo el mapa</translation>
        </message>
        <message>
            <source>counting the legend's classes</source>
            <translation>contando las clases de la leyenda</translation>
        </message>
        <message>
            <source>writing the PDF</source>
            <translation>escribiendo el PDF</translation>
        </message>
        <message>
            <source>writing the PNG</source>
            <translation>escribiendo el PNG</translation>
        </message>
        <message>
            <source>keeping the layout in the project</source>
            <translation>guardando la composición en el proyecto</translation>
        </message>
        <message>
            <source>GeoFaham: situation report of run {run}</source>
            <translation>GeoFaham: informe de situación de la ejecución {run}</translation>
        </message>
        <message>
            <source>Writing the situation report: {stage}…</source>
            <translation>Escribiendo el informe de situación: {stage}…</translation>
        </message>
    </context>
</TS>
