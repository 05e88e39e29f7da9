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
            <source>Buffers and dissolves features by a distance in metres, computed in a local metric projection whatever the layer's CRS (degrees included).</source>
            <translation>Crée une zone tampon fusionnée à une distance en mètres, calculée dans une projection métrique locale quel que soit le SCR de la couche (degrés compris).</translation>
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
            <source>OpenStreetMap basemap behind the results (online only)</source>
            <translation>Fond de carte OpenStreetMap sous les résultats (en ligne seulement)</translation>
        </message>
    </context>
</TS>
