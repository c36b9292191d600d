% Timing of DDE-BIFTOOL on its neuron demo (Shayer & Campbell), for bench_bifurcation.py.
%
% Run by bench_bifurcation.py under GNU Octave when DDE-BIFTOOL is found (DDEBIFTOOL_DIR);
% DDE-BIFTOOL itself is not part of fluidnet. The steps mirror what fluidnet times:
%   1. correct one Hopf point in a21 from the steady state (p_tohopf + p_correc);
%   2. a Hopf curve in (a21, taus): continuation, then first Lyapunov coefficients and
%      codimension-two detection (LocateSpecialPoints);
%   3. a branch of periodic orbits from the Hopf point (degree 4, 20 intervals) with Floquet
%      multipliers (GetStability).
% Prints lines "RESULT name value" that the Python side parses.
base = getenv('DDEBIFTOOL_DIR');
addpath(fullfile(base, 'ddebiftool'), fullfile(base, 'ddebiftool_extra_psol'), ...
        fullfile(base, 'ddebiftool_utilities'), fullfile(base, 'ddebiftool_extra_nmfm'), ...
        fullfile(base, 'ddebiftool_extra_symbolic'), fullfile(base, 'demos', 'neuron'));
warning('off', 'all');
n_hopf = str2double(getenv('N_HOPF'));
n_psol = str2double(getenv('N_PSOL'));
ia21 = 4; itaus = 7;
neuron_tau = @() [5, 6, 7];
funcs = set_symfuncs(@sym_neuron, 'sys_tau', neuron_tau);
par0 = [1/2, -1, 1, 0.8, 0.2, 0.2, 1.5];
parbd = {'min_bound', [ia21, 0], 'max_bound', [ia21, 3; itaus, 10], ...
         'max_step', [ia21, 0.2; itaus, 0.5]};

% 1. one Hopf point (from the equilibrium x = 0 near a21 = 0.8), timed over 5 corrections
stst = dde_stst_create('parameter', par0, 'x', [0; 0]);
mth = df_mthod(funcs, 'stst');
stst.stability = p_stabil(funcs, stst, mth.stability);
t0 = cputime;
for rep = 1:5
  hopf = p_tohopf(funcs, stst);
  mh = df_mthod(funcs, 'hopf');
  [hopf, ok] = p_correc(funcs, hopf, ia21, [], mh.point);
end
printf('RESULT hopf_point_s %.6g\n', (cputime - t0) / 5);
printf('RESULT hopf_a21 %.10g\nRESULT hopf_omega %.10g\n', hopf.parameter(ia21), hopf.omega);

% 2. Hopf curve in (a21, taus) with L1 and codimension-two detection
br = df_brnch(funcs, [ia21, itaus], 'hopf');
br.parameter.min_bound = [ia21, 0];
br.parameter.max_bound = [ia21, 3; itaus, 10];
br.parameter.max_step = [ia21, 0.2; itaus, 0.5];
br.method.continuation.plot = 0;
br.point = hopf;
h2 = hopf; h2.parameter(itaus) = h2.parameter(itaus) + 0.1;
[h2, ok] = p_correc(funcs, h2, ia21, [], mh.point);
br.point(2) = h2;
t0 = cputime;
[br, s, f, r] = br_contn(funcs, br, n_hopf);
t_cont = (cputime - t0);
t0 = cputime;
[brb, tf, ib, types] = LocateSpecialPoints(funcs, br);
t_nf = (cputime - t0);
npts = numel(br.point);
printf('RESULT hopf_curve_points %d\n', npts);
printf('RESULT hopf_curve_s %.6g\nRESULT hopf_curve_special_s %.6g\n', t_cont, t_nf);
for k = 1:numel(ib)
  p = brb.point(ib(k));
  printf('RESULT special_%s %.10g %.10g\n', types{k}, p.parameter(ia21), p.parameter(itaus));
end

% 3. periodic orbits from the Hopf point, degree 4, 20 intervals, with Floquet multipliers
[psol, stepcond] = p_topsol(funcs, hopf, 1e-2, 4, 20);
mp = df_mthod(funcs, 'psol');
[psol, ok] = p_correc(funcs, psol, ia21, stepcond, mp.point);
printf('RESULT first_period %.10g\n', psol.period);
bp = df_brnch(funcs, ia21, 'psol');
bp.parameter.min_bound(1, :) = [ia21, 0];
bp.parameter.max_bound(1, :) = [ia21, 5];
bp.parameter.max_step(1, :) = [ia21, 0.1];
bp.method.continuation.plot = 0;
deg = p_topsol(funcs, hopf, 0, 4, 20);
deg.mesh = []; psol.mesh = [];
bp.point = deg; bp.point(2) = psol;
t0 = cputime;
[bp, s, f, r] = br_contn(funcs, bp, n_psol);
t_psol = (cputime - t0);
t0 = cputime;
[nunst, dom, triv, bp.point] = GetStability(bp, 'funcs', funcs, 'exclude_trivial', true);
t_floq = (cputime - t0);
printf('RESULT psol_orbits %d\nRESULT psol_s %.6g\nRESULT floquet_s %.6g\n', ...
       numel(bp.point), t_psol, t_floq);
