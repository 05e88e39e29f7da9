<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
    <context>
        <name>GeoFaham</name>
        <message>
            <source>GeoFaham</source>
            <translation>GeoFaham</translation>
        </message>
        <message>
            <source>GeoFaham chat</source>
            <translation>Discussion GeoFaham</translation>
        </message>
        <message>
            <source>Send</source>
            <translation>Envoyer</translation>
        </message>
        <message>
            <source>You</source>
            <translation>Vous</translation>
        </message>
        <message>
            <source>Problem</source>
            <translation>Problème</translation>
        </message>
        <message>
            <source>Your question (Ctrl+Enter to send)</source>
            <translation>Votre question (Ctrl+Entrée pour envoyer)</translation>
        </message>
        <message>
            <source>Ask a disaster-response question, e.g. "Which hospitals lie within 1 km of the Eaton fire perimeter?"</source>
            <translation>Posez une question sur la réponse aux catastrophes, par ex. « Quels hôpitaux se trouvent à moins de 1 km du périmètre de l'incendie d'Eaton ? »</translation>
        </message>
        <message>
            <source>GeoFaham cannot start because these Python packages are missing: {names}. Install them with: {command} (or run "{setup}" in the GeoFaham source folder), then restart QGIS.</source>
            <translation>GeoFaham ne peut pas démarrer car ces paquets Python sont absents : {names}. Installez-les avec : {command} (ou lancez « {setup} » dans le dossier source de GeoFaham), puis redémarrez QGIS.</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>Annuler</translation>
        </message>
        <message>
            <source>Planning…</source>
            <translation>Planification…</translation>
        </message>
        <message>
            <source>Plan: </source>
            <translation>Plan : </translation>
        </message>
        <message>
            <source>Step {n}: {goal}</source>
            <translation>Étape {n} : {goal}</translation>
        </message>
        <message>
            <source>Something went wrong: {message}. Details are in the GeoFaham log panel.</source>
            <translation>Une erreur est survenue : {message}. Les détails sont dans le journal GeoFaham.</translation>
        </message>
        <message>
            <source>A question is still running; wait for its answer.</source>
            <translation>Une question est en cours ; attendez sa réponse.</translation>
        </message>
        <message>
            <source>Area of interest: the disaster's own area</source>
            <translation>Zone d'intérêt : la zone de la catastrophe</translation>
        </message>
        <message>
            <source>Step</source>
            <translation>Étape</translation>
        </message>
        <message>
            <source>Operation</source>
            <translation>Opération</translation>
        </message>
        <message>
            <source>Status</source>
            <translation>État</translation>
        </message>
        <message>
            <source>Artifact</source>
            <translation>Artefact</translation>
        </message>
        <message>
            <source>From selection</source>
            <translation>Depuis la sélection</translation>
        </message>
        <message>
            <source>Draw</source>
            <translation>Dessiner</translation>
        </message>
        <message>
            <source>Clear</source>
            <translation>Effacer</translation>
        </message>
        <message>
            <source>pending</source>
            <translation>en attente</translation>
        </message>
        <message>
            <source>Area of interest: {aoi}</source>
            <translation>Zone d'intérêt : {aoi}</translation>
        </message>
        <message>
            <source>Use as AOI (GeoFaham)</source>
            <translation>Utiliser comme zone d'intérêt (GeoFaham)</translation>
        </message>
        <message>
            <source>Settings…</source>
            <translation>Paramètres…</translation>
        </message>
        <message>
            <source>Settings saved; the next question uses them.</source>
            <translation>Paramètres enregistrés ; la prochaine question les utilisera.</translation>
        </message>
        <message>
            <source>The GeoFaham session of this project is missing: {path}</source>
            <translation>La session GeoFaham de ce projet est introuvable : {path}</translation>
        </message>
        <message>
            <source>Disaster analysis</source>
            <translation>Analyse de catastrophe</translation>
        </message>
        <message>
            <source>Input layer</source>
            <translation>Couche en entrée</translation>
        </message>
        <message>
            <source>Distance (metres)</source>
            <translation>Distance (mètres)</translation>
        </message>
        <message>
            <source>Buffered</source>
            <translation>Zone tampon</translation>
        </message>
        <message>
            <source>Features</source>
            <translation>Entités</translation>
        </message>
        <message>
            <source>Reference (hazard) layer</source>
            <translation>Couche de référence (aléa)</translation>
        </message>
        <message>
            <source>Within distance</source>
            <translation>À distance</translation>
        </message>
        <message>
            <source>Reference layer</source>
            <translation>Couche de référence</translation>
        </message>
        <message>
            <source>k</source>
            <translation>k</translation>
        </message>
        <message>
            <source>Nearest</source>
            <translation>Plus proches</translation>
        </message>
        <message>
            <source>Building damage layer</source>
            <translation>Couche des dommages aux bâtiments</translation>
        </message>
        <message>
            <source>Damage field</source>
            <translation>Champ des dommages</translation>
        </message>
        <message>
            <source>Only inside this area</source>
            <translation>Seulement dans cette zone</translation>
        </message>
        <message>
            <source>Damage counts</source>
            <translation>Décomptes des dommages</translation>
        </message>
        <message>
            <source>Invalid input layer: {name}</source>
            <translation>Couche en entrée invalide : {name}</translation>
        </message>
        <message>
            <source>{status} in {seconds:.1f} s · {prompt} + {completion} tokens · run {run}</source>
            <translation>{status} en {seconds:.1f} s · {prompt} + {completion} jetons · exécution {run}</translation>
        </message>
        <message>
            <source>Select a vector layer first.</source>
            <translation>Sélectionnez d'abord une couche vecteur.</translation>
        </message>
        <message>
            <source>No features are selected in {layer}.</source>
            <translation>Aucune entité n'est sélectionnée dans {layer}.</translation>
        </message>
        <message>
            <source>This cannot be used as the area of interest: {why}</source>
            <translation>Ceci ne peut pas servir de zone d'intérêt : {why}</translation>
        </message>
        <message>
            <source>GeoFaham settings</source>
            <translation>Paramètres GeoFaham</translation>
        </message>
        <message>
            <source>Use the embedded local model (offline)</source>
            <translation>Utiliser le modèle local intégré (hors ligne)</translation>
        </message>
        <message>
            <source>Test connection</source>
            <translation>Tester la connexion</translation>
        </message>
        <message>
            <source>Models</source>
            <translation>Modèles</translation>
        </message>
        <message>
            <source>(embedded engine)</source>
            <translation>(moteur intégré)</translation>
        </message>
        <message>
            <source>PostGIS connection</source>
            <translation>Connexion PostGIS</translation>
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
            <translation>Données</translation>
        </message>
        <message>
            <source>Limits</source>
            <translation>Limites</translation>
        </message>
        <message>
            <source>Server URL</source>
            <translation>URL du serveur</translation>
        </message>
        <message>
            <source>Model</source>
            <translation>Modèle</translation>
        </message>
        <message>
            <source>API key (authentication)</source>
            <translation>Clé d'API (authentification)</translation>
        </message>
        <message>
            <source>Maximum turns</source>
            <translation>Nombre maximal de tours</translation>
        </message>
        <message>
            <source>Stall budget</source>
            <translation>Budget de blocages</translation>
        </message>
        <message>
            <source>Maximum replans</source>
            <translation>Nombre maximal de replanifications</translation>
        </message>
        <message>
            <source>All roles</source>
            <translation>Tous les rôles</translation>
        </message>
        <message>
            <source>Connected to {model} at {url}</source>
            <translation>Connecté à {model} sur {url}</translation>
        </message>
        <message>
            <source>Role: {role}</source>
            <translation>Rôle : {role}</translation>
        </message>
        <message>
            <source>Embedded model ready: {path}</source>
            <translation>Modèle intégré prêt : {path}</translation>
        </message>
        <message>
            <source>Embedded model missing: run make setup ({path})</source>
            <translation>Modèle intégré absent : lancez make setup ({path})</translation>
        </message>
        <message>
            <source>Connection failed: {error}</source>
            <translation>Échec de la connexion : {error}</translation>
        </message>
        <message>
            <source>running</source>
            <translation>en cours</translation>
        </message>
        <message>
            <source>done</source>
            <translation>terminé</translation>
        </message>
        <message>
            <source>failed</source>
            <translation>échec</translation>
        </message>
        <message>
            <source>reused</source>
            <translation>réutilisé</translation>
        </message>
        <message>
            <source>skipped</source>
            <translation>ignoré</translation>
        </message>
        <message>
            <source>Keeps the features within a distance in metres of any reference geometry and adds their geodesic distance (distance_m), nearest first.</source>
            <translation>Garde les entités situées à moins d'une distance en mètres d'une géométrie de référence et ajoute leur distance géodésique (distance_m), les plus proches d'abord.</translation>
        </message>
        <message>
            <source>Ranks the k features nearest to the reference layer with their geodesic distance (distance_m).</source>
            <translation>Classe les k entités les plus proches de la couche de référence avec leur distance géodésique (distance_m).</translation>
        </message>
        <message>
            <source>Counts buildings per normalised damage class (none, affected, minor, major, destroyed) from a damage field such as CAL FIRE DINS 'DAMAGE', optionally only those inside an area.</source>
            <translation>Compte les bâtiments par classe de dommage normalisée (none, affected, minor, major, destroyed) à partir d'un champ comme 'DAMAGE' de CAL FIRE DINS, éventuellement seulement dans une zone.</translation>
        </message>
        <message>
            <source>Buffer in metres (any CRS)</source>
            <translation>Zone tampon en mètres (tout SCR)</translation>
        </message>
        <message>
            <source>Features within a distance (geodesic)</source>
            <translation>Entités à une distance donnée (géodésique)</translation>
        </message>
        <message>
            <source>k nearest features (geodesic)</source>
            <translation>k entités les plus proches (géodésique)</translation>
        </message>
        <message>
            <source>Building damage counts by class</source>
            <translation>Décompte des dommages aux bâtiments par classe</translation>
        </message>
        <message>
            <source>Export the last run…</source>
            <translation>Exporter la dernière exécution…</translation>
        </message>
        <message>
            <source>There is no run to export yet.</source>
            <translation>Il n'y a pas encore d'exécution à exporter.</translation>
        </message>
        <message>
            <source>Export the last run to</source>
            <translation>Exporter la dernière exécution vers</translation>
        </message>
        <message>
            <source>Run exported to {path}</source>
            <translation>Exécution exportée vers {path}</translation>
        </message>
        <message>
            <source>Computes a spectral index from a multi-band image whose bands are named (blue, green, red, nir, swir16, swir22 or Sentinel-2 B02…B12).</source>
            <translation>Calcule un indice spectral à partir d'une image multibande dont les bandes sont nommées (blue, green, red, nir, swir16, swir22 ou Sentinel-2 B02…B12).</translation>
        </message>
        <message>
            <source>dNBR from a pre-fire and a post-fire image (nir and swir22 bands), classified into the USGS severity classes: unburned &lt; 0.1, low, moderate-low, moderate-high, high &gt;= 0.66.</source>
            <translation>dNBR à partir d'une image avant et d'une image après le feu (bandes nir et swir22), classé selon les classes de sévérité USGS : non brûlé &lt; 0,1, faible, modérée-faible, modérée-forte, forte &gt;= 0,66.</translation>
        </message>
        <message>
            <source>Spectral index (NDVI, NDWI, MNDWI, NBR)</source>
            <translation>Indice spectral (NDVI, NDWI, MNDWI, NBR)</translation>
        </message>
        <message>
            <source>dNBR burn severity (USGS classes)</source>
            <translation>Sévérité du feu dNBR (classes USGS)</translation>
        </message>
        <message>
            <source>Image</source>
            <translation>Image</translation>
        </message>
        <message>
            <source>Index</source>
            <translation>Indice</translation>
        </message>
        <message>
            <source>Summary</source>
            <translation>Résumé</translation>
        </message>
        <message>
            <source>Pre-fire image</source>
            <translation>Image avant le feu</translation>
        </message>
        <message>
            <source>Post-fire image</source>
            <translation>Image après le feu</translation>
        </message>
        <message>
            <source>Burn severity</source>
            <translation>Sévérité du feu</translation>
        </message>
        <message>
            <source>Running {tool}</source>
            <translation>Exécution de {tool}</translation>
        </message>
        <message>
            <source>Work offline: no requests to Overpass, Nominatim or STAC APIs</source>
            <translation>Travailler hors ligne : aucune requête vers Overpass, Nominatim ou les API STAC</translation>
        </message>
        <message>
            <source>Nominatim (place names)</source>
            <translation>Nominatim (noms de lieux)</translation>
        </message>
        <message>
            <source>Data folder (sample layers, OSM extracts)</source>
            <translation>Dossier de données (couches d'exemple, extraits OSM)</translation>
        </message>
        <message>
            <source>Python sandbox: CPU time</source>
            <translation>Bac à sable Python : temps CPU</translation>
        </message>
        <message>
            <source>Python sandbox: memory</source>
            <translation>Bac à sable Python : mémoire</translation>
        </message>
        <message>
            <source>Partial: the workflow did not complete; the values below may be incomplete.</source>
            <translation>Partiel : le traitement ne s'est pas terminé ; les valeurs ci-dessous peuvent être incomplètes.</translation>
        </message>
        <message>
            <source>Answer: yes</source>
            <translation>Réponse : oui</translation>
        </message>
        <message>
            <source>Answer: no</source>
            <translation>Réponse : non</translation>
        </message>
        <message>
            <source>Stated value</source>
            <translation>Valeur énoncée</translation>
        </message>
        <message>
            <source>Value</source>
            <translation>Valeur</translation>
        </message>
        <message>
            <source>Unit</source>
            <translation>Unité</translation>
        </message>
        <message>
            <source>Not the answer to the question.</source>
            <translation>Ce n'est pas la réponse à la question.</translation>
        </message>
        <message>
            <source>Not applied: {parts}. The values below were computed without it.</source>
            <translation>Non appliqué : {parts}. Les valeurs ci-dessous ont été calculées sans cela.</translation>
        </message>
        <message>
            <source>Your layers GeoFaham may read:</source>
            <translation>Vos couches que GeoFaham peut lire :</translation>
        </message>
        <message>
            <source>Ticked project layers are copied into the session when you ask, so a question can name them.</source>
            <translation>Les couches cochées du projet sont copiées dans la session à chaque question, pour qu'une question puisse les nommer.</translation>
        </message>
        <message>
            <source>not applied</source>
            <translation>non appliqué</translation>
        </message>
        <message>
            <source>Parts of the question</source>
            <translation>Parties de la question</translation>
        </message>
        <message>
            <source>applied by {steps}</source>
            <translation>appliqué par {steps}</translation>
        </message>
        <message>
            <source>Situation report</source>
            <translation>Rapport de situation</translation>
        </message>
        <message>
            <source>Map extent</source>
            <translation>Emprise de la carte</translation>
        </message>
        <message>
            <source>Legend</source>
            <translation>Légende</translation>
        </message>
        <message>
            <source>Produced by GeoFaham from the data named above; numbers are computed, not verified on the ground. Check them before operational use.</source>
            <translation>Produit par GeoFaham à partir des données citées ; les chiffres sont calculés, non vérifiés sur le terrain. Vérifiez-les avant tout usage opérationnel.</translation>
        </message>
        <message>
            <source>Made {made} · run {run} ({status}), finished {when}</source>
            <translation>Établi le {made} · exécution {run} ({status}), terminée le {when}</translation>
        </message>
        <message>
            <source>Question: {question}</source>
            <translation>Question : {question}</translation>
        </message>
        <message>
            <source>How it was computed</source>
            <translation>Méthode de calcul</translation>
        </message>
        <message>
            <source>Sources and licences</source>
            <translation>Sources et licences</translation>
        </message>
        <message>
            <source>Not applied: {part}</source>
            <translation>Non appliqué : {part}</translation>
        </message>
        <message>
            <source>Key numbers</source>
            <translation>Chiffres clés</translation>
        </message>
        <message>
            <source>Answer</source>
            <translation>Réponse</translation>
        </message>
        <message>
            <source>CRS: {crs}</source>
            <translation>SCR : {crs}</translation>
        </message>
        <message>
            <source>licence</source>
            <translation>licence</translation>
        </message>
        <message>
            <source>… and {n} more</source>
            <translation>… et {n} de plus</translation>
        </message>
        <message>
            <source>Limitations</source>
            <translation>Limites</translation>
        </message>
        <message>
            <source>Situation report written (also in the project layouts):</source>
            <translation>Rapport de situation écrit (aussi dans les mises en page du projet) :</translation>
        </message>
        <message>
            <source>No finished run {run} in this session.</source>
            <translation>Aucune exécution terminée {run} dans cette session.</translation>
        </message>
        <message>
            <source>The situation report failed: {message}. Details are in the GeoFaham log panel.</source>
            <translation>Le rapport de situation a échoué : {message}. Les détails sont dans le journal GeoFaham.</translation>
        </message>
        <message>
            <source>Situation report of the last answer</source>
            <translation>Rapport de situation de la dernière réponse</translation>
        </message>
        <message>
            <source>There is no answered run to report yet.</source>
            <translation>Aucune question n'a encore de réponse à rapporter.</translation>
        </message>
        <message>
            <source>PARTIAL: not the answer to the question (see Limitations).</source>
            <translation>PARTIEL : pas la réponse à la question (voir Limites).</translation>
        </message>
        <message>
            <source>Resume</source>
            <translation>Reprendre</translation>
        </message>
        <message>
            <source>Run {run} ({why}): {question}</source>
            <translation>Exécution {run} ({why}) : {question}</translation>
        </message>
        <message>
            <source>interrupted</source>
            <translation>interrompue</translation>
        </message>
        <message>
            <source>Resume run {run}: {question}</source>
            <translation>Reprendre l'exécution {run} : {question}</translation>
        </message>
        <message>
            <source>Resuming run {run}…</source>
            <translation>Reprise de l'exécution {run}…</translation>
        </message>
        <message>
            <source>timed out</source>
            <translation>délai dépassé</translation>
        </message>
        <message>
            <source>cancelled</source>
            <translation>annulée</translation>
        </message>
        <message>
            <source>Reprojects a layer to an EPSG code (EPSG:3832, 32760 ...) or a CRS chosen for the data by name: utm (the layer's own UTM zone), equal-area (Lambert equal-area centred on the data; EASE-Grid 2.0 when it is wide), local (transverse Mercator centred on it), polar-north (EPSG:3413), polar-south (EPSG:3031). Edges are densified first; lines and polygons crossing the antimeridian are cut at ±180° and joined again where the target has no seam, so they stay valid instead of wrapping round the globe.</source>
            <translation>Reprojette une couche vers un code EPSG (EPSG:3832, 32760 ...) ou vers un SCR choisi pour les données par son nom : utm (la zone UTM de la couche), equal-area (équivalente de Lambert centrée sur les données ; EASE-Grid 2.0 si elles sont étendues), local (Mercator transverse centrée sur elles), polar-north (EPSG:3413), polar-south (EPSG:3031). Les arêtes sont d'abord densifiées ; les lignes et polygones qui traversent l'antiméridien sont coupés à ±180° puis rejoints là où la cible n'a pas de couture : ils restent valides au lieu de faire le tour du globe.</translation>
        </message>
        <message>
            <source>Overlays polygons on a square grid of the given cell size in metres, in the layer's UTM zone (cell edges at whole multiples of the size). Each cell the polygons touch gets the geodesic area they cover (area_km2) and each chosen count field (people, buildings) shared out by the part of each polygon's area inside it. The output is in that UTM CRS.</source>
            <translation>Superpose des polygones à une grille carrée de la taille de cellule donnée en mètres, dans la zone UTM de la couche (bords des cellules aux multiples entiers de la taille). Chaque cellule touchée reçoit la surface géodésique couverte (area_km2) et chaque champ de comptage choisi (personnes, bâtiments) réparti selon la part de la surface de chaque polygone qui s'y trouve. La sortie est dans ce SCR UTM.</translation>
        </message>
        <message>
            <source>Removes polygon parts smaller than an area in square metres or thinner than a compactness (Polsby-Popper 4πA/P²: 1 for a disc, 0.785 for a square, 0.03 for a 1 × 100 strip), both measured in an equal-area projection centred on the data whatever the layer's CRS. A feature left with no part is removed; points and lines are kept.</source>
            <translation>Supprime les parties de polygones plus petites qu'une surface en mètres carrés ou plus minces qu'une compacité (Polsby-Popper 4πA/P² : 1 pour un disque, 0,785 pour un carré, 0,03 pour une bande de 1 × 100), mesurées dans une projection équivalente centrée sur les données quel que soit le SCR de la couche. Une entité sans partie restante est supprimée ; points et lignes sont conservés.</translation>
        </message>
        <message>
            <source>Lists what a vector file holds, one row per layer: its name, CRS ('none' when the file names none: then longitude/latitude is assumed), geometry types, feature count and fields with their types, and for a shapefile the field names left cut to 10 characters. Reads every format GeoFaham reads: GeoPackage, GeoJSON, Shapefile, FlatGeobuf, KML/KMZ, GeoParquet, CSV with a WKT, WKB or longitude/latitude column.</source>
            <translation>Liste le contenu d'un fichier vecteur, une ligne par couche : son nom, son SCR ('none' si le fichier n'en nomme aucun : longitude/latitude est alors supposé), ses types de géométrie, son nombre d'entités, ses champs avec leur type et, pour un shapefile, les noms de champs restés tronqués à 10 caractères. Lit tous les formats que GeoFaham lit : GeoPackage, GeoJSON, Shapefile, FlatGeobuf, KML/KMZ, GeoParquet, CSV avec une colonne WKT, WKB ou longitude/latitude.</translation>
        </message>
        <message>
            <source>Reads a shapefile with its field names cut to the DBF's 10 characters restored: from the mapping given (short=full, separated by commas), else from a &lt;name&gt;.fieldnames.json sidecar or the aliases of an ESRI &lt;name&gt;.shp.xml. Text read with the wrong encoding (UTF-8 as Latin-1) is repaired. The names still looking cut are listed in the log.</source>
            <translation>Lit un shapefile en rétablissant les noms de champs tronqués aux 10 caractères du DBF : depuis la correspondance donnée (court=complet, séparés par des virgules), sinon depuis un fichier &lt;nom&gt;.fieldnames.json ou les alias d'un &lt;nom&gt;.shp.xml ESRI. Le texte lu avec le mauvais encodage (UTF-8 lu comme Latin-1) est réparé. Les noms qui semblent encore tronqués sont listés dans le journal.</translation>
        </message>
        <message>
            <source>Field data</source>
            <translation>Données de terrain</translation>
        </message>
        <message>
            <source>Reproject to a named CRS (antimeridian-safe)</source>
            <translation>Reprojeter vers un SCR nommé (sûr à l'antiméridien)</translation>
        </message>
        <message>
            <source>Area-weighted grid (counts shared by area)</source>
            <translation>Grille pondérée par la surface (comptages répartis par surface)</translation>
        </message>
        <message>
            <source>Remove sliver polygons (area in m², thinness)</source>
            <translation>Supprimer les polygones résiduels (surface en m², minceur)</translation>
        </message>
        <message>
            <source>File manifest (layers, CRS, geometry, counts)</source>
            <translation>Inventaire d'un fichier (couches, SCR, géométrie, nombres)</translation>
        </message>
        <message>
            <source>Restore truncated shapefile field names</source>
            <translation>Rétablir les noms de champs tronqués d'un shapefile</translation>
        </message>
        <message>
            <source>Target CRS (EPSG code, or utm, equal-area, local, polar-north, polar-south)</source>
            <translation>SCR cible (code EPSG, ou utm, equal-area, local, polar-north, polar-south)</translation>
        </message>
        <message>
            <source>Reprojected</source>
            <translation>Reprojetée</translation>
        </message>
        <message>
            <source>CRS used</source>
            <translation>SCR utilisé</translation>
        </message>
        <message>
            <source>No target CRS given (an EPSG code, or utm, equal-area, polar-north ...)</source>
            <translation>Aucun SCR cible donné (un code EPSG, ou utm, equal-area, polar-north ...)</translation>
        </message>
        <message>
            <source>Polygon layer</source>
            <translation>Couche de polygones</translation>
        </message>
        <message>
            <source>Cell size (metres)</source>
            <translation>Taille de cellule (mètres)</translation>
        </message>
        <message>
            <source>Count fields to share out by area</source>
            <translation>Champs de comptage à répartir par surface</translation>
        </message>
        <message>
            <source>Grid</source>
            <translation>Grille</translation>
        </message>
        <message>
            <source>Minimum area (m²)</source>
            <translation>Surface minimale (m²)</translation>
        </message>
        <message>
            <source>Minimum compactness (4πA/P², 0 to 1)</source>
            <translation>Compacité minimale (4πA/P², de 0 à 1)</translation>
        </message>
        <message>
            <source>Without slivers</source>
            <translation>Sans polygones résiduels</translation>
        </message>
        <message>
            <source>Sliver parts removed</source>
            <translation>Parties résiduelles supprimées</translation>
        </message>
        <message>
            <source>Features removed</source>
            <translation>Entités supprimées</translation>
        </message>
        <message>
            <source>Vector file</source>
            <translation>Fichier vecteur</translation>
        </message>
        <message>
            <source>Manifest</source>
            <translation>Inventaire</translation>
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
            <translation>Correspondance des champs (court=complet, ...)</translation>
        </message>
        <message>
            <source>With full field names</source>
            <translation>Avec les noms de champs complets</translation>
        </message>
        <message>
            <source>No field name was restored: give a mapping, a sidecar or an ESRI .shp.xml</source>
            <translation>Aucun nom de champ rétabli : donnez une correspondance, un fichier .fieldnames.json ou un .shp.xml ESRI</translation>
        </message>
        <message>
            <source>{n} cells in {crs}</source>
            <translation>{n} cellules en {crs}</translation>
        </message>
        <message>
            <source>'{pair}' is not a field mapping (write short=full name, e.g. populati_1=population_male)</source>
            <translation>'{pair}' n'est pas une correspondance de champ (écrivez court=nom complet, p. ex. populati_1=population_male)</translation>
        </message>
        <message>
            <source>{name} is not a shapefile (.shp); other formats keep their full field names</source>
            <translation>{name} n'est pas un shapefile (.shp) ; les autres formats gardent leurs noms de champs complets</translation>
        </message>
        <message>
            <source>The input layer has no CRS, so it cannot be reprojected (set it in the layer's properties first)</source>
            <translation>La couche d'entrée n'a pas de SCR et ne peut donc pas être reprojetée (définissez-le d'abord dans les propriétés de la couche)</translation>
        </message>
        <message>
            <source>Road reachability through a hazard</source>
            <translation>Accessibilité routière à travers un aléa</translation>
        </message>
        <message>
            <source>Roads (OSM lines)</source>
            <translation>Routes (lignes OSM)</translation>
        </message>
        <message>
            <source>Hazard polygons</source>
            <translation>Polygones de l'aléa</translation>
        </message>
        <message>
            <source>Origins</source>
            <translation>Origines</translation>
        </message>
        <message>
            <source>Targets</source>
            <translation>Cibles</translation>
        </message>
        <message>
            <source>Roads</source>
            <translation>Routes</translation>
        </message>
        <message>
            <source>Longest route (km, 0: any)</source>
            <translation>Itinéraire le plus long (km, 0 : sans limite)</translation>
        </message>
        <message>
            <source>Farthest a feature may be from a road (metres)</source>
            <translation>Distance maximale d'une entité à une route (mètres)</translation>
        </message>
        <message>
            <source>Reachability</source>
            <translation>Accessibilité</translation>
        </message>
        <message>
            <source>Cut roads</source>
            <translation>Routes coupées</translation>
        </message>
        <message>
            <source>Road segments cut</source>
            <translation>Tronçons de route coupés</translation>
        </message>
        <message>
            <source>Origins that lose every target</source>
            <translation>Origines qui perdent toutes les cibles</translation>
        </message>
        <message>
            <source>Drivable roads</source>
            <translation>Routes carrossables</translation>
        </message>
        <message>
            <source>All roads and paths</source>
            <translation>Toutes les routes et chemins</translation>
        </message>
        <message>
            <source>Which origins can still reach which targets by road when a hazard cuts the network: network distance (m) and free-flow time (min) before and after, detour ratio and status (reachable, detour, cut off, unreachable before, off network), one row per origin and target at the origin. Without targets: whether each origin stays joined to the main road network. Roads are OpenStreetMap lines with a highway field (oneway, maxspeed, bridge read when present); a road touching the hazard is cut, bridges over it kept open, tunnels cut. Also writes the cut roads.</source>
            <translation>Quelles origines peuvent encore atteindre quelles destinations par la route quand un aléa coupe le réseau : distance sur le réseau (m) et temps en circulation libre (min) avant et après, rapport de détour et statut (accessible, détour, coupé, inaccessible avant, hors réseau), une ligne par origine et destination, à l'origine. Sans destinations : si chaque origine reste reliée au réseau routier principal. Les routes sont des lignes OpenStreetMap avec un champ highway (oneway, maxspeed, bridge lus s'ils existent) ; une route qui touche l'aléa est coupée, les ponts au-dessus restent ouverts, les tunnels sont coupés. Écrit aussi les routes coupées.</translation>
        </message>
        <message>
            <source>OpenStreetMap basemap behind the results (online only)</source>
            <translation>Fond de carte OpenStreetMap sous les résultats (en ligne seulement)</translation>
        </message>
        <message>
            <source>an earlier result</source>
            <translation>un résultat antérieur</translation>
        </message>
        <message>
            <source>your area</source>
            <translation>votre zone</translation>
        </message>
        <message>
            <source>GeoFaham: {question}</source>
            <translation>GeoFaham : {question}</translation>
        </message>
        <message>
            <source>Draw the area of interest: click to add corners; right-click or double-click to finish; Esc cancels.</source>
            <translation>Dessinez la zone d'intérêt : cliquez pour ajouter des sommets ; clic droit ou double-clic pour terminer ; Échap annule.</translation>
        </message>
        <message>
            <source>Drawing cancelled: the area of interest is unchanged.</source>
            <translation>Dessin annulé : la zone d'intérêt reste la même.</translation>
        </message>
        <message>
            <source>Writing the situation report…</source>
            <translation>Écriture du rapport de situation…</translation>
        </message>
        <message>
            <source>A report is being written or a question is running: ask for this report when it ends.</source>
            <translation>Un rapport est en cours d’écriture ou une question tourne : demandez ce rapport quand ils auront fini.</translation>
        </message>
        <message>
            <source>Processing model written (opened in the Model Designer):</source>
            <translation>Modèle de traitement écrit (ouvert dans le modeleur graphique) :</translation>
        </message>
        <message>
            <source>Processing model written:</source>
            <translation>Modèle de traitement écrit :</translation>
        </message>
        <message>
            <source>Open as Processing model</source>
            <translation>Ouvrir comme modèle de traitement</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: it has no counted answer computed by its steps.</source>
            <translation>Cette exécution ne peut pas être ouverte comme modèle de traitement : elle n’a pas de réponse comptée calculée par ses étapes.</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: step {step} ({tool}) has no Processing algorithm that computes the same thing.</source>
            <translation>Cette exécution ne peut pas être ouverte comme modèle de traitement : l’étape {step} ({tool}) n’a pas d’algorithme de traitement qui calcule la même chose.</translation>
        </message>
        <message>
            <source>This run cannot be opened as a Processing model: its input {artifact} is not a vector layer.</source>
            <translation>Cette exécution ne peut pas être ouverte comme modèle de traitement : son entrée {artifact} n’est pas une couche vecteur.</translation>
        </message>
        <message>
            <source>Answer: {step}</source>
            <translation>Réponse : {step}</translation>
        </message>
        <message>
            <source>Answer of GeoFaham run {run}:</source>
            <translation>Réponse de l’exécution GeoFaham {run} :</translation>
        </message>
        <message>
            <source>Buffers features by a distance in metres, computed in a local metric projection whatever the layer's CRS (degrees included): merged into one area, or one buffer per feature with its attributes.</source>
            <translation>Crée des zones tampons à une distance en mètres, calculées dans une projection métrique locale quel que soit le SCR de la couche (degrés compris) : fusionnées en une seule zone, ou une par entité avec ses attributs.</translation>
        </message>
        <message>
            <source>Counts the features of a layer, in total (one row, value 'all') or per value of a field (most frequent first, no value as '(none)'): a table of value and count. An empty layer counts 0.</source>
            <translation>Compte les entités d’une couche, au total (une ligne, valeur 'all') ou par valeur d’un champ (la plus fréquente d’abord, l’absence de valeur comme '(none)') : une table de valeurs et de comptes. Une couche vide compte 0.</translation>
        </message>
        <message>
            <source>Count features (in total or by a field)</source>
            <translation>Compter les entités (au total ou par champ)</translation>
        </message>
        <message>
            <source>Merge the buffers into one area</source>
            <translation>Fusionner les zones tampons en une seule zone</translation>
        </message>
        <message>
            <source>Count by this field</source>
            <translation>Compter par ce champ</translation>
        </message>
        <message>
            <source>Counts</source>
            <translation>Comptes</translation>
        </message>
        <message>
            <source>Features counted</source>
            <translation>Entités comptées</translation>
        </message>
        <message>
            <source>The Processing model could not be written: {message}. Details are in the GeoFaham log panel.</source>
            <translation>Le modèle de traitement n’a pas pu être écrit : {message}. Les détails sont dans le panneau de journal GeoFaham.</translation>
        </message>
        <message>
            <source>preparing the run's layers</source>
            <translation>préparation des couches de l’exécution</translation>
        </message>
        <message>
            <source>adding the map context</source>
            <translation>ajout du contexte cartographique</translation>
        </message>
        <message>
            <source>laying out the map</source>
            <translation>mise en page de la carte</translation>
        </message>
        <message>
            <source>counting the legend's classes</source>
            <translation>comptage des classes de la légende</translation>
        </message>
        <message>
            <source>writing the PDF</source>
            <translation>écriture du PDF</translation>
        </message>
        <message>
            <source>writing the PNG</source>
            <translation>écriture du PNG</translation>
        </message>
        <message>
            <source>keeping the layout in the project</source>
            <translation>conservation de la mise en page dans le projet</translation>
        </message>
        <message>
            <source>GeoFaham: situation report of run {run}</source>
            <translation>GeoFaham : rapport de situation de l’exécution {run}</translation>
        </message>
        <message>
            <source>Writing the situation report: {stage}…</source>
            <translation>Écriture du rapport de situation : {stage}…</translation>
        </message>
    </context>
</TS>
