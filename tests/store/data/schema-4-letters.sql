-- A lensopt session database of schema 4, written by `lensopt run` before schema 5 (commit 2a92918's parent):
-- the SQL of tests/store/data/schema-4-letters.db as sqlite3's iterdump gives it, with its pragmas.
PRAGMA application_id = 1279610451;
PRAGMA user_version = 4;
PRAGMA journal_mode = WAL;
BEGIN TRANSACTION;
CREATE TABLE duel_trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        first_sphere_d REAL NOT NULL,
        first_cylinder_d REAL NOT NULL,
        second_sphere_d REAL NOT NULL,
        second_cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL,
        letters TEXT NOT NULL,
        answer TEXT NOT NULL CHECK (answer IN ('first', 'second', 'same')),
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx)
    );
CREATE TABLE ranking_trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        lenses_d TEXT NOT NULL,
        letter_logmar REAL NOT NULL,
        letters TEXT NOT NULL,
        lens_order TEXT NOT NULL,
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx)
    );
CREATE TABLE sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        participant TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'letters',
        status TEXT NOT NULL DEFAULT 'running',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        seed INTEGER NOT NULL,
        software_version TEXT NOT NULL,
        protocol TEXT NOT NULL,
        calibration TEXT NOT NULL,
        optimizer_settings TEXT NOT NULL
    );
INSERT INTO "sessions" VALUES(1,'old-v4','letters','finished',1.7954977233192384243e+09,1795497736.61488,7,'0.1.0','{"protocol":{"name":"demo-simulated","observer":"simulated","description":"A simulated patient (true correction S -1.25 D, C -0.75 D) answers 36 letters.","feedback":"letters"},"optimizer":{"rule":"ucb-ald","trials":12,"n_initial":5,"sphere_bounds_d":[-4.0,4.0],"cylinder_bounds_d":[-4.0,4.0],"letter_bounds_logmar":[-0.3,1.0],"inference":"ep","lapse":0.02},"lens":{"step_d":0.0,"prompt":false},"letters":{"alphabet":"ABCDEFGHIJKLMNOPQRSTUVWXYZ"},"calibration":{"distance_cm":300.0,"monitor":"","screen_width_cm":53.0,"screen_width_px":1920,"screen_height_px":1080,"min_stroke_px":1.0},"display":{"fullscreen":false,"window_size_px":[1024,768]},"timing":{"fixation_s":0.15,"letter_s":0.0,"response_timeout_s":0.0,"feedback_s":0.25,"iti_s":0.05,"simulated_response_s":0.3},"feedback":{"enabled":true},"breaks":{"every_trials":18},"keys":{"pass_key":"space","pause":"escape","confirm":"space","quit":"q","first":"1","second":"2","same":"s","lenses":["1","2","3","4"]},"simulated":{"sphere_d":-1.25,"cylinder_d":-0.75,"slope":5.0,"lapse":0.0,"va_best_logmar":0.0,"tie_threshold":0.0},"duel":{"letters_per_line":5,"model":"ties"},"ranking":{"lenses":3,"letters_per_line":5}}','{"screen_width_cm":53.0,"screen_width_px":1920,"screen_height_px":1080,"distance_cm":300.0,"min_stroke_px":1.0,"max_height_fraction":0.8}','{"rule":"ucb-ald","seed":7,"sphere_bounds_d":[-4.0,4.0],"cylinder_bounds_d":[-4.0,4.0],"letter_bounds_logmar":[-0.3,1.0],"n_initial":5,"lens_step_d":null,"inference":"ep","hyperparameters":{"structure":"psychophysics","family":"se","lengthscales":[3.125288032737963],"variance":6.599396268927592,"context_variance":15.542064200812595,"input_map":[[1.0,0.0],[1.0,1.0]]},"n_alternatives":26,"likelihood":"floored","lapse":0.02,"prior_mean":-3.0,"stop":null,"reference_context":"adaptive","beta":3.5,"n_candidates":128,"n_starts":2,"n_thompson_features":512,"refit_every":null,"refit_after":40,"min_information_bits":0.02,"search_tolerance":0.0001}');
CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        sphere_d REAL NOT NULL,
        cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL,
        letter TEXT NOT NULL,
        response TEXT,
        correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx)
    );
INSERT INTO "trials" VALUES(1,1,1,3.1777104077566038498e+00,2.20548552196154812321e+00,0.512624106586067,'P','S',0,0.3,1.79549772713804125785e+09,1.79549772743871212006e+09,'{"letter_height_px":51.45974779179255,"decision_ms":0.23042300017550588}');
INSERT INTO "trials" VALUES(2,1,2,-3.10458204545852556321e+00,-2.48721813362297972105e+00,7.01183236304516288583e-01,'H','Y',0,0.3,1.79549772791711354253e+09,1.79549772821798491479e+09,'{"letter_height_px":79.43792753076863,"decision_ms":0.2186250021622982}');
INSERT INTO "trials" VALUES(3,1,3,-4.38775008259607801619e-01,3.46990724546607332001e+00,6.13613668516553301124e-02,'A','P',0,0.3,1.79549772871993899348e+09,1.79549772902226042743e+09,'{"letter_height_px":18.205566768996572,"decision_ms":0.28877899967483245}');
INSERT INTO "trials" VALUES(4,1,4,3.0765378969501675499e+00,-2.14423653418734438957e+00,9.67543619835351753621e-01,'Y','Z',0,0.3,1.79549772951066517832e+09,1.79549772981104803081e+09,'{"letter_height_px":146.68744640430324,"decision_ms":0.22882000121171586}');
INSERT INTO "trials" VALUES(5,1,5,-1.69508627661589450497e+00,-2.30046641710860200191e-01,-3.41909182279310219776e-02,'Q','Q',1,0.3,1.79549773030218410489e+09,1.79549773060352826125e+09,'{"letter_height_px":14.610056066107402,"decision_ms":0.22743800218449906}');
INSERT INTO "trials" VALUES(6,1,6,-1.73559857384427873583e+00,-2.12502024045537252217e-01,-0.3,'D','W',0,0.3,1.79549773109482288359e+09,1.79549773139658451082e+09,'{"letter_height_px":7.922144407330787,"decision_ms":8.914874997572042}');
INSERT INTO "trials" VALUES(7,1,7,-4.0,4.0,-0.3,'S','Y',0,0.3,1.79549773192491745948e+09,1.79549773222598290441e+09,'{"letter_height_px":7.922144407330787,"decision_ms":27.339389998815022}');
INSERT INTO "trials" VALUES(8,1,8,9.0867818383415832617e-01,-4.0,-0.3,'E','G',0,0.3,1.79549773271483683583e+09,1.79549773301659822458e+09,'{"letter_height_px":7.922144407330787,"decision_ms":9.372385000460781}');
INSERT INTO "trials" VALUES(9,1,9,-4.0,-4.0,-0.3,'F','A',0,0.3,1.79549773354695391654e+09,1.79549773384770107271e+09,'{"letter_height_px":7.922144407330787,"decision_ms":24.534559997846372}');
INSERT INTO "trials" VALUES(10,1,10,4.0,4.0,1.0,'G','L',0,0.3,1.79549773435484957698e+09,1.79549773465699672695e+09,'{"letter_height_px":158.07034142244424,"decision_ms":14.667628998722648}');
INSERT INTO "trials" VALUES(11,1,11,4.0,4.0,-0.3,'O','P',0,0.3,1.79549773515837240217e+09,1.79549773546064281469e+09,'{"letter_height_px":7.922144407330787,"decision_ms":20.073706000403035}');
INSERT INTO "trials" VALUES(12,1,12,4.0,-4.0,-0.3,'Y','M',0,0.3,1.79549773596925497055e+09,1.79549773626982474327e+09,'{"letter_height_px":7.922144407330787,"decision_ms":27.054125002905494}');
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('sessions',1);
COMMIT;
